import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { execute, sbx, startSandboxDaemon } from './helpers.js';

/**
 * Without isolation the sandbox refuses to run code (issue 22): process mode with no bubblewrap
 * (PLATFORM_BWRAP naming a missing file) answers 503 with the reason, never runs code bare.
 */
let d: TestDaemon;
const saved = process.env.PLATFORM_BWRAP;
beforeAll(async () => {
  process.env.PLATFORM_BWRAP = '/nonexistent/bwrap';
  d = await startSandboxDaemon({ mode: 'process' });
});
afterAll(async () => {
  await d?.close();
  if (saved === undefined) delete process.env.PLATFORM_BWRAP;
  else process.env.PLATFORM_BWRAP = saved;
});

describe('no isolation', () => {
  it('503 with the reason on execute and call; the pool stays empty', async () => {
    const r = await execute(d, { code: 'print(1)' });
    expect(r.status).toBe(503);
    expect(r.body.error).toMatch(/cannot isolate code here.*bubblewrap \(bwrap\) is not installed/);
    const c = await sbx(d, 'POST', '/v1/call', { image: 'local/x/y@sha256:00', function: 'f' });
    expect(c.status).toBe(503);
    expect(c.body.error).toMatch(/could not start a tool sandbox: .*bubblewrap/);
    expect((await sbx(d, 'GET', '/v1/pool')).body).toEqual({ warm: 0, target: 3, in_flight: 0, created_total: 0 });
  });
});
