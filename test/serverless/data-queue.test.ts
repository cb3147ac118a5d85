import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_PY, call, desired, harness, hostOf, source, template, waitReport, type Harness } from './data-helpers.js';

/**
 * The revision's request queue is bounded in length (max(100, max_scale × container_concurrency))
 * and in wait: past either, 503 in the envelope with Retry-After, while queued requests within
 * the bounds are served once an instance frees up.
 */
let h: Harness;
beforeAll(async () => {
  h = await harness({ startTimeoutMs: 5000, queueWaitMs: 4000 });
});
afterAll(async () => h?.close());

describe('serverless data plane: the bounded queue', { timeout: 60_000 }, () => {
  it('queues up to the bound, refuses past it, and times out a wait', async () => {
    const t = template('q', 1, source(h, { 'main.py': SERVER_PY }));
    h.plane.apply(desired('q', [t], [{ revision: t.revision, percent: 100 }], { containerConcurrency: 1, maxScale: 1 }));
    await waitReport(h, 'svc-q', t.revision, 'ready');
    // One request holds the only instance for 2 s; 102 more arrive meanwhile: 100 wait and are served, 2 are refused at once.
    const holder = call(h, hostOf('q'), '/?ms=2000');
    await new Promise((r) => setTimeout(r, 100));
    const rest = await Promise.all(Array.from({ length: 102 }, () => call(h, hostOf('q'))));
    expect((await holder).status).toBe(200);
    const refused = rest.filter((r) => r.status === 503);
    expect(rest.filter((r) => r.status === 200)).toHaveLength(100);
    expect(refused).toHaveLength(2);
    expect(refused[0]!.body.error).toBe('revision q-00001 is at capacity: 1 instances of at most 1, 100 requests already waiting');
    expect(refused[0]!.body.request_id).toBeTruthy();

    // A wait longer than the bound: 503 after it.
    const long = call(h, hostOf('q'), '/?ms=5500');
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    const waited = await call(h, hostOf('q'));
    expect(waited.status).toBe(503);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3900);
    expect(waited.body.error).toBe('revision q-00001 had no free instance within 4 s (1 of at most 1 running, container_concurrency 1)');
    expect((await long).status).toBe(200);
    await h.plane.remove('svc-q');
  });
});
