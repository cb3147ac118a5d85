/**
 * `platform dev` (issue 25): save-to-serving of a python function, the time from a file write to
 * the first invoke that answers with the new code, polled through the API as a user's client
 * would. In the same run, the same change made by running `platform deploy` (a new CLI process,
 * then one invoke) and bare `node -e 0`, the floor of any CLI process.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { execa } from 'execa';
import { benchLogin, median, ms, ratio, startDaemonProcess, stopDaemonProcess, timeIt, type BenchOptions, type Row } from './lib.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'run.js');
const handler = (greeting: string) => `def handle(event):\n    return {"reply": "${greeting} " + str(event.get("message"))}\n`;

export async function devBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const rounds = opts.quick ? 2 : 7;
  const deploys = opts.quick ? 1 : 3;
  const loadAtStart = loadavg()[0]!;
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-dev-'));
  const dir = join(home, 'src', 'hello');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.py'), handler('v0'));
  const daemon = await startDaemonProcess(join(home, 'state'), { PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
  const token = await benchLogin(daemon.url);
  const env = { ...process.env, PLATFORM_HOME: join(home, 'cli'), PLATFORM_API_URL: daemon.url, PLATFORM_TOKEN: token, NO_COLOR: '1' };
  const reply = async () => {
    const res = await fetch(`${daemon.url}/v1/agents/hello/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{"message":"x"}' });
    return res.ok ? ((await res.json()) as { reply: string }).reply : '';
  };
  /** Writes a new greeting and polls invoke until it is served; the time from the write. */
  const saveToServing = async (greeting: string) => {
    const t = performance.now();
    writeFileSync(join(dir, 'main.py'), handler(greeting));
    while ((await reply()) !== `${greeting} x`) await new Promise((r) => setTimeout(r, 10));
    return performance.now() - t;
  };

  const dev = spawn(process.execPath, [BIN, 'dev', dir, '--json'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const events: Array<Record<string, unknown>> = [];
  let rest = '';
  dev.stdout.on('data', (c: Buffer) => {
    const parts = (rest + c.toString()).split('\n');
    rest = parts.pop()!;
    for (const p of parts) if (p.trim()) events.push(JSON.parse(p) as Record<string, unknown>);
  });
  const deployed = (n: number) => events.filter((e) => e.event === 'deployed' || e.event === 'failed').length >= n;
  for (const end = Date.now() + 60_000; !deployed(1); await new Promise((r) => setTimeout(r, 20))) if (Date.now() > end) throw new Error('dev: no first deploy within 60 s');

  const viaDev: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    viaDev.push(await saveToServing(`dev${i}`));
    // The next save waits until this deploy's event is out, so rounds do not overlap.
    for (const end = Date.now() + 30_000; !deployed(i + 1) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  }
  const reported = events.filter((e) => e.event === 'deployed' && typeof e.since_save_ms === 'number').map((e) => e.since_save_ms as number);
  dev.kill('SIGTERM');
  await new Promise((r) => dev.once('exit', r));

  const viaDeploy: number[] = [];
  for (let i = 1; i <= deploys; i++) {
    const t = performance.now();
    writeFileSync(join(dir, 'main.py'), handler(`deploy${i}`));
    await execa('node', [BIN, 'deploy', dir], { env });
    while ((await reply()) !== `deploy${i} x`) await new Promise((r) => setTimeout(r, 10));
    viaDeploy.push(performance.now() - t);
  }
  const nodeStart: number[] = [];
  for (let i = 0; i < (opts.quick ? 3 : 5); i++) nodeStart.push(await timeIt(() => execa(process.execPath, ['-e', '0'])));

  await stopDaemonProcess(daemon.pid);
  rmSync(home, { recursive: true, force: true });
  const devMs = median(viaDev);
  return [
    { bench: 'dev', metric: `save-to-serving, python function (median of ${rounds}, write to new answer)`, value: ms(devMs), baseline: `${ms(median(viaDeploy))} (platform deploy + invoke)`, ratio: ratio(devMs, median(viaDeploy)), goal: '< 1000 ms' },
    { bench: 'dev', metric: 'save-to-serving, worst of the rounds', value: ms(Math.max(...viaDev)), goal: '< 1000 ms' },
    { bench: 'dev', metric: 'save-to-deployed as dev reports it (median)', value: ms(median(reported)) },
    { bench: 'dev', metric: 'node -e 0 (the floor of any CLI process)', value: ms(median(nodeStart)) },
    // The figures above move with what else runs: a shared machine's load says how far.
    { bench: 'dev', metric: 'load average (1 min) at start and end', value: `${loadAtStart.toFixed(1)} / ${loadavg()[0]!.toFixed(1)}` },
  ];
}
