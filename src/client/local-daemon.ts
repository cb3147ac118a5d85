import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, closeSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { platformHome } from './contexts.js';
import { AbortError } from './errors.js';
import { nodeFetch } from './node-fetch.js';
import { packageFile } from '../package-root.js';

export interface DaemonInfo {
  version: string;
  url: string;
  /** The internal listener (private MCP servers); absent from older daemons. */
  internal_url?: string;
  /** The sandbox listener (SANDBOX_URL, spec 2 §4.6); absent from older daemons. */
  sandbox_url?: string;
  pid: number;
  /** How workloads are isolated (bubblewrap, none, unavailable, docker); absent from older daemons. */
  isolation?: string;
  isolation_detail?: string;
}

/** The bootstrap admin a first start hands to the CLI that started it (never written to disk). */
export interface BootstrapAdmin {
  email: string;
  password: string;
  /** The daemon made the password up: show it once. False when it came from PLATFORM_ADMIN_PASSWORD. */
  generated: boolean;
}

/** The daemon reads this variable to find the pipe it tells the bootstrap admin on (src/daemon/daemon-main.ts). */
const BOOTSTRAP_FD = 3;

const locatorFile = () => join(platformHome(), 'daemon.json');
export const daemonLogFile = () => join(platformHome(), 'logs', 'daemon.log');

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** 'silent' when the port accepts connections and nothing answers: a daemon stopped (SIGSTOP) or wedged. */
async function health(url: string, timeoutMs = 1000): Promise<'ok' | 'silent' | 'down'> {
  try {
    const res = await nodeFetch(new URL('/healthz', url), { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok ? 'ok' : 'down';
  } catch (e) {
    return (e as Error).name === 'TimeoutError' ? 'silent' : 'down';
  }
}

const healthy = async (url: string, timeoutMs = 1000) => (await health(url, timeoutMs)) === 'ok';

export type DaemonProbe = { state: 'none' } | { state: 'running'; info: DaemonInfo } | { state: 'silent'; info: DaemonInfo };

/**
 * The daemon of this state directory: running, silent (its process is alive and its port takes
 * connections but /healthz does not answer within the wait), or none. A stale locator is removed.
 */
export async function probeDaemon(timeoutMs = 1000): Promise<DaemonProbe> {
  const file = locatorFile();
  if (!existsSync(file)) return { state: 'none' };
  let info: DaemonInfo;
  try {
    info = JSON.parse(readFileSync(file, 'utf8')) as DaemonInfo;
  } catch {
    return { state: 'none' };
  }
  if (!pidAlive(info.pid)) {
    rmSync(file, { force: true });
    return { state: 'none' };
  }
  const h = await health(info.url, timeoutMs);
  return h === 'ok' ? { state: 'running', info } : h === 'silent' ? { state: 'silent', info } : { state: 'none' };
}

/** The running daemon of this state directory, or undefined. A stale locator is removed. */
export async function findDaemon(): Promise<DaemonInfo | undefined> {
  const probe = await probeDaemon();
  return probe.state === 'running' ? probe.info : undefined;
}

/** The port a start will ask for: --port, else PLATFORM_PORT, else 7070. */
export const requestedPort = (port?: number) => port ?? Number(process.env.PLATFORM_PORT ?? 7070);

/**
 * Starts the daemon detached (its own process group, output to logs/daemon.log) and waits until
 * it writes its locator and answers /healthz. A second start returns the running one.
 */
export async function startDaemon(
  opts: { port?: number; env?: Record<string, string> } = {},
): Promise<DaemonInfo & { alreadyRunning: boolean; bootstrap?: BootstrapAdmin }> {
  const probe = await probeDaemon();
  if (probe.state === 'running') return { ...probe.info, alreadyRunning: true };
  if (probe.state === 'silent') throw silentDaemon(probe.info);
  const home = platformHome();
  mkdirSync(join(home, 'logs'), { recursive: true });
  // Commands started side by side (a script's `&`, a Makefile's -j) would each start a daemon on
  // the same state directory: one takes the start lock, the others use the daemon it starts.
  const lock = join(home, 'daemon-start.lock');
  const deadline = Date.now() + 35_000;
  while (!takeStartLock(lock)) {
    const other = await probeDaemon();
    if (other.state === 'running') return { ...other.info, alreadyRunning: true };
    if (Date.now() > deadline) throw new AbortError(`another command has been starting the local daemon for 35 s (lock ${lock})`, `remove ${lock} if no platform command is running`);
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    const other = await probeDaemon();
    if (other.state === 'running') return { ...other.info, alreadyRunning: true };
    return await launchDaemon(home, opts);
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Takes the start lock (a file holding the owner's pid); a lock whose owner is gone is taken over. */
function takeStartLock(lock: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let owner = 0;
    let age = 0;
    try {
      owner = Number(readFileSync(lock, 'utf8')) || 0;
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    // An empty lock is being written, unless it is old (its owner died between create and write).
    const stale = owner ? !pidAlive(owner) : age > 5000;
    if (!stale) return false;
    rmSync(lock, { force: true });
  }
  return false;
}

async function launchDaemon(home: string, opts: { port?: number; env?: Record<string, string> }): Promise<DaemonInfo & { alreadyRunning: boolean; bootstrap?: BootstrapAdmin }> {
  const port = requestedPort(opts.port);
  // Only this start's lines of the shared log say why it failed (an earlier busy port must not).
  const logStart = existsSync(daemonLogFile()) ? statSync(daemonLogFile()).size : 0;
  const logFd = openSync(daemonLogFile(), 'a');
  // The one-file bundle starts faster (scripts/bundle-daemon.mjs); the module tree works as well.
  const bundle = packageFile('dist', 'daemon', 'daemon.bundle.js');
  const main = existsSync(bundle) ? bundle : packageFile('dist', 'daemon', 'main.js');
  const child = spawn(process.execPath, [main, '--port', String(port)], {
    detached: true,
    // The pipe on fd 3 carries the bootstrap admin of a first start: never through the log file.
    stdio: ['ignore', logFd, logFd, 'pipe'],
    env: { ...process.env, ...opts.env, PLATFORM_HOME: home, PLATFORM_BOOTSTRAP_FD: String(BOOTSTRAP_FD) },
  });
  closeSync(logFd);
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? 1));
  child.unref();
  const channel = child.stdio[BOOTSTRAP_FD] as Readable;
  const told = firstLine(channel);
  try {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (exited !== null) throw startFailure(`the daemon exited with code ${exited} while starting`, port, logStart);
      if (existsSync(locatorFile())) {
        try {
          const info = JSON.parse(readFileSync(locatorFile(), 'utf8')) as DaemonInfo;
          if (info.pid === child.pid && (await healthy(info.url, 500))) {
            // The daemon tells (or says there is nothing to tell) before it listens.
            const line = await Promise.race([told, new Promise<string>((r) => setTimeout(() => r(''), 2000))]);
            return { ...(await withIsolation(info)), alreadyRunning: false, bootstrap: parseBootstrap(line) };
          }
        } catch {
          // locator being written; retry
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw startFailure('the daemon did not become healthy within 30 s');
  } finally {
    channel.destroy();
  }
}

/**
 * The daemon writes its locator as soon as it listens and again once it has probed how workloads
 * are isolated (a bwrap run): `daemon start` reports that, so it waits a moment for the second.
 */
async function withIsolation(info: DaemonInfo, waitMs = 5000): Promise<DaemonInfo> {
  const deadline = Date.now() + waitMs;
  let latest = info;
  while (latest.isolation === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    try {
      const again = JSON.parse(readFileSync(locatorFile(), 'utf8')) as DaemonInfo;
      if (again.pid === info.pid) latest = again;
    } catch {
      // being renamed into place; read again
    }
  }
  return latest;
}

/** The first line a stream carries ('' when it ends without one). */
function firstLine(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      data += c;
      if (data.includes('\n')) resolve(data.slice(0, data.indexOf('\n')));
    });
    stream.on('end', () => resolve(data));
    stream.on('close', () => resolve(data));
    stream.on('error', () => resolve(''));
  });
}

function parseBootstrap(line: string): BootstrapAdmin | undefined {
  try {
    const v = JSON.parse(line) as Partial<BootstrapAdmin>;
    if (typeof v.email === 'string' && typeof v.password === 'string') return { email: v.email, password: v.password, generated: v.generated === true };
  } catch {
    // nothing told
  }
  return undefined;
}

function startFailure(message: string, port?: number, logStart = 0): AbortError {
  let lines: string[] = [];
  try {
    lines = readFileSync(daemonLogFile()).subarray(logStart).toString('utf8').trim().split('\n');
  } catch {
    // no log yet
  }
  // The common case gets its own words: which port, and how to get another.
  if (port !== undefined && lines.some((line) => /EADDRINUSE/.test(line))) {
    return new AbortError(
      `port ${port} on 127.0.0.1 is already in use by another program, so the local daemon cannot listen there`,
      `pass \`--port 0\` to take a free port (or --port N, or set PLATFORM_PORT), or stop what listens on ${port}`,
    );
  }
  // Stack frames say where it failed, the lines around them what: a failed start's own message
  // would otherwise scroll out under its stack.
  const tail = lines.filter((line) => !/^\s+at /.test(line)).slice(-5).join('\n');
  return new AbortError(`${message}${tail ? `:\n${tail}` : ''}`, `see ${daemonLogFile()} or run \`platform daemon logs\``);
}

/** Stops the daemon gracefully (SIGTERM), escalating to SIGKILL after the grace period. */
export async function stopDaemon(graceMs = 20_000): Promise<DaemonInfo | undefined> {
  const file = locatorFile();
  if (!existsSync(file)) return undefined;
  const info = JSON.parse(readFileSync(file, 'utf8')) as DaemonInfo;
  if (!pidAlive(info.pid)) {
    rmSync(file, { force: true });
    return undefined;
  }
  process.kill(info.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pidAlive(info.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  if (pidAlive(info.pid)) process.kill(info.pid, 'SIGKILL');
  rmSync(file, { force: true });
  return info;
}

/** A daemon whose process lives but does not answer: a second one would fight it for the state directory. */
export function silentDaemon(info: DaemonInfo): AbortError {
  return new AbortError(
    `the local daemon (pid ${info.pid}) at ${info.url} is running but does not answer; is it stopped (SIGSTOP) or stuck?`,
    `resume it with \`kill -CONT ${info.pid}\`, or restart it: \`platform daemon stop\` then \`platform daemon start\``,
  );
}
