/**
 * Code sandbox benchmarks (issue 22): warm execute p50/p99 of print(1), cold execute (pool
 * target 0, so every request makes its sandbox), executions per second with the pool at its
 * target (3 clients), each in process mode (bubblewrap) and docker mode, against the floor: a
 * plain `python3 -c "print(1)"` on the host, measured in the same run. Docker rows say why when
 * no engine or image is there. Goals: warm p50 < 60 ms, cold < 300 ms in process mode.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerSkipReason, median, ms, percentile, ratio, samples, startDaemonProcess, stopDaemonProcess, type BenchOptions, type Row } from './lib.js';

const IMAGE = process.env.PLATFORM_SANDBOX_IMAGE || 'platform-python:local';
const CLIENTS = 3;

interface Running {
  sandbox: string;
  pid: number;
  home: string;
}

async function start(mode: 'process' | 'docker', target: number): Promise<Running> {
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-sandbox-'));
  const d = await startDaemonProcess(home, { PLATFORM_SANDBOX_MODE: mode, PLATFORM_SANDBOX_POOL_TARGET: String(target), PLATFORM_SANDBOX_IMAGE: IMAGE });
  const sandbox = (JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8')) as { sandbox_url: string }).sandbox_url;
  return { sandbox, pid: d.pid, home };
}

async function stop(d: Running): Promise<void> {
  await stopDaemonProcess(d.pid);
  rmSync(d.home, { recursive: true, force: true });
}

async function execute(d: Running, code = 'print(1)'): Promise<void> {
  const r = await fetch(`${d.sandbox}/v1/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  const body = (await r.json()) as { stdout?: string; error?: string };
  if (r.status !== 200 || body.stdout !== '1\n') throw new Error(`execute failed: ${r.status} ${JSON.stringify(body)}`);
}

async function waitWarm(d: Running, warm: number): Promise<void> {
  for (const end = Date.now() + 60_000; Date.now() < end; ) {
    const p = (await (await fetch(`${d.sandbox}/v1/pool`)).json()) as { warm: number };
    if (p.warm >= warm) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`the pool never reached ${warm} warm sandboxes`);
}

/** Runs `fn` from `clients` loops for `seconds`; returns completions per second. */
async function throughput(clients: number, seconds: number, fn: () => Promise<unknown>): Promise<number> {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        await fn();
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

/**
 * The floor runs the interpreter the sandbox runs (Debian's /usr/bin/python3 when present), not
 * whatever `python3` is first on PATH: a pyenv shim there costs ~300 ms of bash before Python.
 */
const FLOOR_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

const hostPython = () =>
  new Promise<void>((resolve, reject) => {
    const p = spawn(FLOOR_PYTHON, ['-c', 'print(1)'], { stdio: ['ignore', 'pipe', 'inherit'] });
    p.once('error', reject);
    p.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`python3 exited ${code}`))));
  });

async function modeRows(mode: 'process' | 'docker', floor: { p50: number; perSecond: number }, n: number, throughputSeconds: number): Promise<Row[]> {
  const bench = `sandbox (${mode})`;
  const warmD = await start(mode, 3);
  let warm: number[];
  let perSecond: number;
  try {
    await waitWarm(warmD, 3);
    await execute(warmD);
    // Each sample waits for the pool to be full again, so every one is a warm execute.
    warm = [];
    for (let i = 0; i < n; i++) {
      await waitWarm(warmD, 3);
      warm.push(...(await samples(1, () => execute(warmD))));
    }
    await waitWarm(warmD, 3);
    perSecond = await throughput(CLIENTS, throughputSeconds, () => execute(warmD));
  } finally {
    await stop(warmD);
  }
  const coldD = await start(mode, 0);
  let cold: number[];
  try {
    await execute(coldD);
    cold = await samples(Math.ceil(n / 2), () => execute(coldD));
  } finally {
    await stop(coldD);
  }
  return [
    { bench, metric: 'warm execute print(1) p50', value: ms(median(warm)), baseline: `python3 -c ${ms(floor.p50)}`, ratio: ratio(median(warm), floor.p50), goal: mode === 'process' ? '< 60 ms' : '' },
    { bench, metric: 'warm execute print(1) p99', value: ms(percentile(warm, 99)), baseline: '', ratio: '', goal: '' },
    { bench, metric: 'cold execute (pool target 0) p50', value: ms(median(cold)), baseline: `python3 -c ${ms(floor.p50)}`, ratio: ratio(median(cold), floor.p50), goal: mode === 'process' ? '< 300 ms' : '' },
    { bench, metric: `executions/s, pool at target 3, ${CLIENTS} clients`, value: perSecond.toFixed(1), baseline: `python3 -c ${floor.perSecond.toFixed(1)}/s`, ratio: ratio(perSecond, floor.perSecond), goal: '' },
  ];
}

export async function sandboxBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const q = opts.quick;
  const n = Number(process.env.SANDBOX_BENCH_SAMPLES ?? (q ? 6 : 60));
  await hostPython();
  const hostSamples = await samples(n, hostPython);
  const floor = { p50: median(hostSamples), perSecond: await throughput(CLIENTS, q ? 1 : 5, hostPython) };
  const rows: Row[] = [
    { bench: 'sandbox (floor)', metric: `${FLOOR_PYTHON} -c "print(1)" on the host p50`, value: ms(floor.p50), baseline: '', ratio: '', goal: '' },
    { bench: 'sandbox (floor)', metric: `${FLOOR_PYTHON} -c "print(1)" on the host p99`, value: ms(percentile(hostSamples, 99)), baseline: '', ratio: '', goal: '' },
  ];
  rows.push(...(await modeRows('process', floor, n, q ? 1 : 8)));
  const skip = q ? 'quick mode (docker builds and cold starts take minutes)' : await dockerSkipReason(IMAGE);
  if (skip) rows.push({ bench: 'sandbox (docker)', metric: 'every docker row', skipped: skip });
  else rows.push(...(await modeRows('docker', floor, Math.ceil(n / 2), 10)));
  return rows;
}
