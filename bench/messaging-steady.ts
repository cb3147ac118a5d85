/**
 * Steady-state companion of bench/messaging.ts: daemon CPU (from /proc) per request and per
 * message for publish and pull+ack in batches of 100 and of 1, after a watched warm-up (the first
 * hundred requests of a fresh daemon cost two to three times the steady state, which the default
 * bench run mostly measures). Not part of `npm run bench`. Usage:
 *   npx tsx bench/messaging-steady.ts [checkout dir, default this one]   (ROUNDS=n, default 2)
 * Pass another built checkout to compare before/after on the same machine, interleaved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { benchLogin, processCpuMs, startDaemonProcess } from './lib.js';
const root = process.argv[2] ?? join(import.meta.dirname, '..');
const home = mkdtempSync(join(tmpdir(), 'platform-bench-steady-'));
const { url, pid } = await startDaemonProcess(home, {}, join(root, 'dist/daemon/main.js'));
const cpu = () => processCpuMs(pid)!;
const agent = new Agent({ connections: 4 });
let token = '';
const api = async (method: string, path: string, body?: unknown) => {
  const res = await request(url + path, { method: method as 'GET', dispatcher: agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const j = (await res.body.json()) as any;
  if (res.statusCode >= 300) throw new Error(`${path} ${res.statusCode} ${JSON.stringify(j)}`);
  return j;
};
token = await benchLogin(url);
const project = await api('GET', '/v1/projects/default');
const T = `/v1/projects/${project.id}/topics`;
await api('POST', T, { name: 't', max_bytes: '512Mi' });
while (!(await api('GET', `${T}/t`)).ready) await new Promise((r) => setTimeout(r, 5));
await api('POST', `${T}/t/subscriptions`, { name: 's', max_ack_pending: 100000 });
while (!(await api('GET', `${T}/t/subscriptions/s`)).ready) await new Promise((r) => setTimeout(r, 5));
const BODY = 'x'.repeat(100);
const par = async (n: number, fn: () => Promise<unknown>) => { let left = n; await Promise.all(Array.from({ length: 4 }, async () => { while (left-- > 0) await fn(); })); };
const batch = (k: number) => ({ messages: Array.from({ length: k }, (_, i) => ({ text: `m-${i}-${BODY}` })) });
const measure = async (name: string, reqs: number, msgs: number, fn: () => Promise<unknown>) => {
  const c0 = cpu(); const t0 = performance.now();
  await par(reqs, fn);
  const c = cpu() - c0;
  console.log(`${name.padEnd(22)} ${(c * 1000 / reqs).toFixed(0).padStart(6)} µs/req ${(c * 1000 / msgs).toFixed(1).padStart(6)} µs/msg  ${(msgs / ((performance.now() - t0) / 1000)).toFixed(0)} msg/s`);
};
const pullAck = (k: number) => async () => {
  const r = await api('POST', `${T}/t/subscriptions/s:pull`, { max_messages: k, timeout_ms: 0 });
  if (r.messages.length) await api('POST', `${T}/t/subscriptions/s:ack`, { ack_ids: r.messages.map((m: any) => m.ack_id) });
};
// warm up, watched
for (let k = 0; k < 10; k++) await measure(`cold publish ${k}`, 20, 2000, () => api('POST', `${T}/t:publish`, batch(100)));
for (let k = 0; k < 5; k++) await measure(`cold pull ${k}`, 20, 2000, pullAck(100));
await par(200, pullAck(100));
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++) {
  await measure('publish x100', 400, 40000, () => api('POST', `${T}/t:publish`, batch(100)));
  await measure('pull+ack x100', 400, 40000, pullAck(100));
  await measure('publish x1', 2000, 2000, () => api('POST', `${T}/t:publish`, batch(1)));
  await measure('pull+ack x1', 2000, 2000, pullAck(1));
}
await agent.close();
process.kill(pid, 'SIGTERM');
while (processCpuMs(pid) !== undefined) await new Promise((r) => setTimeout(r, 20));
rmSync(home, { recursive: true, force: true });
