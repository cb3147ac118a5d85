/** Shared helpers for benchmarks: timing, percentiles, a spawned daemon and the table every bench prints. */
import Docker from 'dockerode';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatTable, type Row } from './table.js';

// What `platform daemon start` runs: the one-file bundle when the build made it.
const BUNDLE = join(import.meta.dirname, '..', 'dist', 'daemon', 'daemon.bundle.js');
const MAIN = existsSync(BUNDLE) ? BUNDLE : join(import.meta.dirname, '..', 'dist', 'daemon', 'main.js');
export const BENCH_ADMIN = { email: 'bench@example.test', password: 'Bench-Password-123' };

/** Spawns the built daemon on a free port with limits lifted; resolves once /healthz answers. */
/** Starts the built daemon (of this checkout, or `main` of another) as its own process and waits until healthy. */
export async function startDaemonProcess(home: string, env: Record<string, string> = {}, main = MAIN, extraNodeArgs: string[] = []): Promise<{ url: string; pid: number; ms: number }> {
  const t = performance.now();
  // BENCH_DAEMON_NODE_ARGS (say `--cpu-prof --cpu-prof-dir=/tmp/prof`): node flags for the daemon alone, to profile it under
  // a benchmark's load (NODE_OPTIONS refuses --cpu-prof and would reach the benchmark's own process too).
  const nodeArgs = [...(process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean), ...extraNodeArgs];
  const child = spawn(process.execPath, [...nodeArgs, main, '--port', '0'], {
    env: {
      ...process.env,
      PLATFORM_HOME: home,
      PLATFORM_ADMIN_EMAIL: BENCH_ADMIN.email,
      PLATFORM_ADMIN_PASSWORD: BENCH_ADMIN.password,
      PLATFORM_SIGNIN_LIMIT_PER_IP: '100000',
      PLATFORM_SIGNIN_LIMIT_PER_ACCOUNT: '100000',
      PLATFORM_RATE_LIMIT_BURST: '0',
      ...env,
    },
    stdio: 'ignore',
    detached: true,
  });
  child.unref();
  const locator = join(home, 'daemon.json');
  for (;;) {
    if (existsSync(locator)) {
      try {
        const info = JSON.parse(readFileSync(locator, 'utf8')) as { url: string; pid: number };
        const r = await fetch(`${info.url}/healthz`);
        if (r.ok) return { ...info, ms: performance.now() - t };
      } catch {
        // not yet
      }
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Signs the bench admin in and returns a session token. */
export async function benchLogin(url: string): Promise<string> {
  const r = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BENCH_ADMIN) });
  return ((await r.json()) as { token: string }).token;
}

export type { Goal, Row } from './table.js';
export type { BenchOptions } from './options.js';

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
export const median = (xs: number[]) => percentile(xs, 50);
export const ms = (x: number) => `${x.toFixed(1)} ms`;
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

export async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export async function samples(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timeIt(fn));
  return out;
}

export function printTable(rows: Row[]): void {
  for (const line of formatTable(rows)) console.log(line);
}

/** CPU time (user + sys, ms) a process has used so far, from /proc; undefined where there is none. */
export function processCpuMs(pid: number | undefined): number | undefined {
  try {
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/** Stops a daemon started by startDaemonProcess (it stops its instances) and waits until it has exited. */
export async function stopDaemonProcess(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (alive()) process.kill(pid, 'SIGTERM');
  for (const end = Date.now() + 20_000; alive() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
}

/** Why a docker row cannot run (no engine, or the locally built base image is missing); '' when it can. */
export async function dockerSkipReason(image: string): Promise<string> {
  const docker = new Docker();
  return docker.ping().then(
    () => docker.getImage(image).inspect().then(() => '', () => `base image ${image} missing (scripts/build-base-images.sh)`),
    () => 'no Docker engine answers',
  );
}
