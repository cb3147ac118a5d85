import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { execute, startSandboxDaemon, waitWarm } from './helpers.js';

/** A request that finds no sandbox within the wait gets 503 (spec 2 §7, §8), here with a 1 s wait. */
let d: TestDaemon;
beforeAll(async () => {
  d = await startSandboxDaemon({ mode: 'process', poolTarget: 1, maxLive: 1, waitMs: 1000 });
  await waitWarm(d, 1);
});
afterAll(() => d?.close());

describe('pool wait', () => {
  it('503 after the wait when every sandbox is busy; served again once one is free', async () => {
    const long = execute(d, { code: 'import time\ntime.sleep(2.5)\nprint("long")' });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    const refused = await execute(d, { code: 'print(1)' });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/no sandbox available after waiting 1 seconds/);
    expect(refused.body.request_id).toBeTruthy();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect((await long).body.stdout).toBe('long\n');
    const later = await execute(d, { code: 'print(2)' });
    expect(later.status).toBe(200);
    expect(later.body.stdout).toBe('2\n');
  });
});
