import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { execute, sbx, startSandboxDaemon, waitWarm } from './helpers.js';

/** The warm pool (spec 2 §4.6, §8): live statistics, waiting beyond the pool, replacements. */
let d: TestDaemon;
beforeAll(async () => {
  d = await startSandboxDaemon({ mode: 'process', poolTarget: 2, maxLive: 4 });
});
afterAll(() => d?.close());

describe('warm pool', () => {
  it('prepares target sandboxes ahead, destroys each after one run and replaces it', async () => {
    const before = await waitWarm(d, 2);
    expect(before).toMatchObject({ warm: 2, target: 2, in_flight: 0 });
    // Normally 2; a start that failed on a loaded machine was retried and counts too.
    expect(before.created_total).toBeGreaterThanOrEqual(2);
    const base = before.created_total;
    const running = execute(d, { code: 'import time\ntime.sleep(0.5)\nprint("done")' });
    // While it runs: one in flight, and its replacement started at once.
    let during: any;
    for (const end = Date.now() + 5000; Date.now() < end; ) {
      during = (await sbx(d, 'GET', '/v1/pool')).body;
      if (during.in_flight === 1) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(during.in_flight).toBe(1);
    expect(during.created_total).toBe(base + 1);
    const r = await running;
    expect(r.body.stdout).toBe('done\n');
    const after = await waitWarm(d, 2);
    expect(after).toEqual({ warm: 2, target: 2, in_flight: 0, created_total: base + 1 });
    // Two runs never share a sandbox.
    const ids = await Promise.all([1, 2, 3].map(() => execute(d, { code: 'print(1)' })));
    expect(new Set(ids.map((x) => x.body.sandbox_id)).size).toBe(3);
  });

  it('a warm execute only sends code: it is fast', async () => {
    await waitWarm(d, 2);
    const r = await execute(d, { code: 'print(1)' });
    expect(r.body.stdout).toBe('1\n');
    console.log(`warm execute print(1): ${r.ms.toFixed(1)} ms round trip, ${r.body.duration_ms} ms in the sandbox`);
    expect(r.ms).toBeLessThan(1000);
  });

  it('concurrent executions beyond the pool wait for a sandbox and then succeed', async () => {
    await waitWarm(d, 2);
    const runs = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => execute(d, { code: `import time\ntime.sleep(0.2)\nprint(${i})` })));
    expect(runs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(runs.map((r) => r.body.stdout)).toEqual(['0\n', '1\n', '2\n', '3\n', '4\n', '5\n']);
    const stats = await waitWarm(d, 2);
    expect(stats.in_flight).toBe(0);
  });
});
