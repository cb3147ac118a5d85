import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { idx, vectorConfig } from './helpers.js';

let d: TestDaemon;
const clock = new ManualClock();
beforeAll(async () => {
  // Readiness never fires during this file, so a pending index can be aged with the clock.
  d = await startTestDaemon(vectorConfig({ readyDelayMs: 600_000 }), { clock });
});
afterAll(() => d.close());

describe('GET /vector/healthz (spec 3 §4.1 "Health")', () => {
  it('answers 200 without credentials, every dependency ok with its latency', async () => {
    const r = await d.api('GET', '/vector/healthz');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      status: 'ok',
      dependencies: {
        vector_store: { ok: true, latency_ms: expect.any(Number) },
        orchestration: { ok: true, latency_ms: expect.any(Number) },
        database: { ok: true, latency_ms: expect.any(Number) },
      },
    });
  });

  it('is 503 degraded, naming the index, when an index stays pending past its readiness delay', async () => {
    const c = await cast(d);
    expect((await d.api('POST', idx(c.project.id), { token: c.member.token, body: { name: 'stuck', dimensions: 2 } })).status).toBe(201);
    expect((await d.api('GET', '/vector/healthz')).status).toBe(200);
    clock.advance(600_000 + 31_000);
    const r = await d.api('GET', '/vector/healthz');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('degraded');
    expect(r.body.dependencies.orchestration).toMatchObject({ ok: false, error: '1 index pending past the readiness delay: stuck' });
    expect(r.body.dependencies.database.ok).toBe(true);
    expect(r.body.dependencies.vector_store.ok).toBe(true);
    // Deleting the stuck index clears the condition.
    expect((await d.api('DELETE', idx(c.project.id, 'stuck'), { token: c.admin.token })).status).toBe(204);
    expect((await d.api('GET', '/vector/healthz')).status).toBe(200);
  });
});
