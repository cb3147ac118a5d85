import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HELLO_PY, archive, deployForm, waitState } from './helpers.js';

/**
 * The figures, measured in one run: warm invoke through the daemon against calling the
 * shim directly, as p50 and p99. Printed as a table; asserted only loosely (shared machines vary).
 */
let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
});
afterAll(async () => d?.close());

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function time(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

describe('invoke overhead', () => {
  it('measures warm invoke through the daemon against the shim directly', { timeout: 120_000 }, async () => {
    const token = await d.adminToken();
    expect((await deployForm(d, token, { name: 'bench', framework: 'function' }, archive({ 'main.py': HELLO_PY.replace('print("handling", event.get("message"), flush=True)', 'pass') }))).status).toBe(202);
    await waitState(d, token, 'bench', 'ready');
    const port = (d.db.prepare('SELECT port FROM agents_instances').get() as { port: number }).port;
    const body = JSON.stringify({ message: 'x' });
    const viaDaemon = async () => {
      const r = await request(`${d.url}/v1/agents/bench/invoke`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      await r.body.dump();
    };
    const direct = async () => {
      const r = await request(`http://127.0.0.1:${port}/`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      await r.body.dump();
    };
    await time(20, viaDaemon);
    await time(20, direct);
    const n = 200;
    const a = await time(n, direct);
    const b = await time(n, viaDaemon);
    const rows = [
      ['direct to shim', pct(a, 50), pct(a, 99)],
      ['through daemon', pct(b, 50), pct(b, 99)],
      ['added', pct(b, 50) - pct(a, 50), pct(b, 99) - pct(a, 99)],
    ];
    console.log(['path             p50 ms   p99 ms', ...rows.map(([k, p50, p99]) => `${String(k).padEnd(16)} ${Number(p50).toFixed(2).padStart(6)}   ${Number(p99).toFixed(2).padStart(6)}`)].join('\n'));
    console.log(`warm invoke ratio (daemon/direct) p50 ${(pct(b, 50) / pct(a, 50)).toFixed(2)}, p99 ${(pct(b, 99) / pct(a, 99)).toFixed(2)}`);
    expect(pct(b, 50)).toBeGreaterThan(0);
  });
});
