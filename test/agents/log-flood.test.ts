import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Agent, FormData, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { archive } from './helpers.js';

/**
 * Issue 16 §2: one workload flooding its stdout must not take the daemon down. The daemon runs as
 * a process of its own so its RSS can be read from /proc; /healthz is polled back to back while
 * a function writes 24 MiB without a newline and then 100 MiB of short lines, and a quiet
 * function is invoked meanwhile.
 */
const FLOOD = `
const MiB = 1024 * 1024;
// Resolves once the daemon has read the block (stdout may be asynchronous): the invoke answers
// when the flood has reached the daemon, not when it sits in this process.
const write = (s) => new Promise((resolve) => process.stdout.write(s, resolve));
export async function handle(event) {
  if (event.message === 'long') {
    // 24 MiB and never a newline.
    const block = 'x'.repeat(MiB);
    for (let i = 0; i < 24; i++) await write(block);
    return { wrote: 24 * MiB };
  }
  if (event.message === 'lines') {
    // 100 MiB of 32-byte lines, written in 1 MiB blocks.
    let block = '';
    for (let i = 0; block.length < MiB; i++) block += 'short line ' + String(i).padStart(20, '0') + '\\n';
    let n = 0;
    for (let i = 0; i < 100; i++) n += block.length, await write(block);
    return { wrote: n };
  }
  return { reply: 'idle' };
}
`;
const QUIET = `export function handle(event) { return { reply: 'quiet ' + event.message }; }`;

const nodeOk = await runtimeAvailable('nodejs');
const built = existsSync(DAEMON_MAIN);
if (!built) console.warn(`SKIPPED log flood test: ${DAEMON_MAIN} is missing (run npm run build)`);
if (!nodeOk.ok) console.warn(`SKIPPED log flood test: ${nodeOk.reason}`);

const home = mkdtempSync(join(tmpdir(), 'platform-flood-'));
let daemon: DaemonProcess | undefined;
let token = '';
const conn = new Agent({ connections: 4 });

const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
const cpuSeconds = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function deploy(name: string, code: string): Promise<void> {
  const form = new FormData();
  form.append('name', name);
  form.append('framework', 'function');
  form.append('runtime', 'nodejs');
  form.append('code', new Blob([new Uint8Array(archive({ 'index.mjs': code }))]), 'code.tar.gz');
  const r = await fetch(`${daemon!.url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` }, dispatcher: conn });
  expect(r.status, await r.text()).toBe(202);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const a = (await (await fetch(`${daemon!.url}/v1/agents/${name}`, { headers: { authorization: `Bearer ${token}` }, dispatcher: conn })).json()) as { state: string; message?: string };
    if (a.state === 'ready') return;
    if (a.state === 'failed') throw new Error(`${name} failed: ${a.message}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} never became ready`);
}

async function invoke(name: string, message: string, timeoutMs = 60_000): Promise<{ status: number; body: any }> {
  const r = await fetch(`${daemon!.url}/v1/agents/${name}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
    dispatcher: conn,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

async function history(name: string, limit = 10_000): Promise<{ message: string; stream: string }[]> {
  const r = await fetch(`${daemon!.url}/v1/agents/${name}/logs/history?limit=${limit}`, { headers: { authorization: `Bearer ${token}` }, dispatcher: conn });
  expect(r.status).toBe(200);
  return ((await r.json()) as { lines: { message: string; stream: string }[] }).lines;
}

beforeAll(async () => {
  if (!built || !nodeOk.ok) return;
  daemon = await spawnDaemonProcess(home, { INVOKE_AUTH_REQUIRED: 'false', PLATFORM_RATE_LIMIT_BURST: '0' });
  token = await loginToken(daemon.url);
  await Promise.all([deploy('flood', FLOOD), deploy('quiet', QUIET)]);
  // Warm both so the flood measures logging, not cold starts.
  expect((await invoke('flood', 'hi')).status).toBe(200);
  expect((await invoke('quiet', 'hi')).status).toBe(200);
}, 120_000);

afterAll(async () => {
  const child: ChildProcess | undefined = daemon?.child;
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await daemon!.exited;
  }
  await conn.close();
  rmSync(home, { recursive: true, force: true });
});

describe.skipIf(!built || !nodeOk.ok)('log flood (issue 16 §2)', () => {
  it('24 MiB without a newline and 100 MiB of short lines leave /healthz fast, RSS bounded and logs readable', { timeout: 120_000 }, async () => {
    const d = daemon!;
    // The machine's own noise, for comparison: /healthz back to back for a second before the flood.
    const idle: number[] = [];
    for (const end = performance.now() + 2000; performance.now() < end; ) {
      const t = performance.now();
      await (await fetch(`${d.url}/healthz`, { dispatcher: conn })).arrayBuffer();
      idle.push(performance.now() - t);
    }
    idle.sort((a, b) => a - b);
    console.info(`log flood: idle /healthz ${idle.length} polls p50 ${pct(idle, 50).toFixed(1)} ms p99 ${pct(idle, 99).toFixed(1)} ms`);
    const baseRss = rssKiB(d.pid);

    /**
     * Runs one flood while /healthz is polled back to back and the quiet function is invoked
     * every 50 ms; failures are counted, not thrown, so the figures are reported either way.
     */
    const measure = async (message: string) => {
      let maxRss = rssKiB(d.pid);
      const rssTimer = setInterval(() => (maxRss = Math.max(maxRss, rssKiB(d.pid))), 20);
      const health: number[] = [];
      const quiet: number[] = [];
      let failures = 0;
      let flooding = true;
      const poller = (async () => {
        while (flooding) {
          const t = performance.now();
          try {
            const r = await fetch(`${d.url}/healthz`, { dispatcher: conn, signal: AbortSignal.timeout(10_000) });
            await r.arrayBuffer();
            if (r.status !== 200) failures++;
          } catch {
            failures++;
          }
          health.push(performance.now() - t);
        }
      })();
      const quietLoop = (async () => {
        while (flooding) {
          const t = performance.now();
          const r = await invoke('quiet', 'ping', 20_000).catch(() => undefined);
          if (r?.status !== 200 || r.body.reply !== 'quiet ping') failures++;
          quiet.push(performance.now() - t);
          await new Promise((res) => setTimeout(res, 50));
        }
      })();
      const cpu0 = cpuSeconds(d.pid);
      const t0 = performance.now();
      const res = await invoke('flood', message).catch((e: Error) => ({ status: 0, body: { error: e.message } }));
      const ms = performance.now() - t0;
      const cpu = cpuSeconds(d.pid) - cpu0;
      flooding = false;
      await Promise.all([poller, quietLoop]);
      clearInterval(rssTimer);
      if (existsSync(`/proc/${d.pid}`)) maxRss = Math.max(maxRss, rssKiB(d.pid));
      health.sort((a, b) => a - b);
      quiet.sort((a, b) => a - b);
      const f = { res, ms, health: [...health], polls: health.length, p50: pct(health, 50), p99: pct(health, 99), max: health.at(-1)!, quiet: quiet.length, quietMax: quiet.at(-1) ?? 0, failures, growthMiB: (maxRss - baseRss) / 1024 };
      console.info(
        `log flood ${message}: ${Math.round(ms)} ms, daemon CPU ${cpu.toFixed(2)} s, invoke ${res.status}; /healthz ${f.polls} polls p50 ${f.p50.toFixed(1)} ms p99 ${f.p99.toFixed(1)} ms max ${f.max.toFixed(1)} ms; ` +
          `quiet invoke ${f.quiet} calls max ${f.quietMax.toFixed(0)} ms; ${failures} failures; daemon RSS ${Math.round(baseRss / 1024)} -> max ${Math.round(maxRss / 1024)} MiB (+${f.growthMiB.toFixed(1)} MiB)`,
      );
      return f;
    };

    const long = await measure('long');
    const lines = await measure('lines');
    for (const f of [long, lines]) {
      expect(f.failures).toBe(0);
      expect(f.polls).toBeGreaterThan(10);
      expect(f.growthMiB).toBeLessThan(100);
      expect(f.quiet).toBeGreaterThan(0);
    }
    // p99 of /healthz over the whole flood. The bound is 50 ms; on a machine whose own noise
    // already puts an idle daemon's p99 past half of that (shared CI, load far above the core
    // count) the absolute bound measures the machine, not the daemon: the check is then that the
    // flood at most doubles the idle p99 (+25 ms), and the test says so. Before issue 16 the
    // flood put p99 at 2.5-3 s on the same machine.
    const all = [...long.health, ...lines.health].sort((a, b) => a - b);
    const p99 = pct(all, 99);
    const idleP99 = pct(idle, 99);
    console.info(`log flood: /healthz over both floods ${all.length} polls p99 ${p99.toFixed(1)} ms (idle p99 ${idleP99.toFixed(1)} ms)`);
    if (idleP99 < 25) expect(p99).toBeLessThan(50);
    else {
      console.warn(`log flood: idle /healthz p99 is ${idleP99.toFixed(1)} ms on this machine (load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}): checking p99 < 50 ms or < 2 x idle p99 + 25 ms`);
      expect(p99).toBeLessThan(Math.max(50, 2 * idleP99 + 25));
    }
    expect(long.res.status).toBe(200);
    expect(long.res.body.wrote).toBe(24 * 1024 * 1024);
    expect(lines.res.status).toBe(200);
    expect(lines.res.body.wrote).toBe(100 * 1024 * 1024);

    // Logs are readable after: the long line is cut and says so, the drops are counted.
    const hist = await history('flood');
    const ro = new Database(join(home, 'platform.db'), { readonly: true });
    const cut = ro.prepare("SELECT message FROM agents_logs WHERE message LIKE 'xxxx%'").get() as { message: string } | undefined;
    ro.close();
    expect(cut, 'the long line is in the history').toBeDefined();
    expect(cut!.message).toMatch(/\[truncated: line longer than 16384 bytes/);
    expect(Buffer.byteLength(cut!.message)).toBeLessThan(16_384 + 200);
    expect(hist.some((l) => l.message.startsWith('short line '))).toBe(true);
    // 100 MiB of 32-byte lines is 3,276,800 lines, the first of which ends the 24 MiB line (it
    // had no newline): each of the other 3,276,799 is stored or counted as dropped. Counts arrive
    // in system lines as each drop window closes.
    const total = (100 * 1024 * 1024) / 32 - 1;
    let stored = 0;
    let dropped = 0;
    let notices: string[] = [];
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      await history('flood', 1); // flushes the pending lines
      const db = new Database(join(home, 'platform.db'), { readonly: true });
      stored = (db.prepare("SELECT COUNT(*) AS n FROM agents_logs WHERE message LIKE 'short line %'").get() as { n: number }).n;
      notices = (db.prepare("SELECT message FROM agents_logs WHERE stream = 'system' AND message LIKE '%dropped%'").all() as { message: string }[]).map((r) => r.message);
      db.close();
      dropped = notices.reduce((n, m) => n + Number(/(\d+) lines? dropped/.exec(m)?.[1] ?? 0), 0);
      if (stored + dropped >= total) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    console.info(`log flood: ${stored} short lines stored, ${dropped} counted as dropped in ${notices.length} notice(s), e.g. ${JSON.stringify(notices[0])}`);
    expect(stored + dropped).toBe(total);
    // The live view reads too, and carries the same lines.
    const live = await fetch(`${d.url}/v1/agents/flood/logs`, { headers: { authorization: `Bearer ${token}` }, dispatcher: conn });
    expect(live.status).toBe(200);
    expect(await live.text()).toMatch(/short line|dropped/);

    // The daemon answers normally after.
    expect((await invoke('quiet', 'after')).body.reply).toBe('quiet after');
  });
});
