import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** The built daemon entry, as `platform daemon start` runs it; tests of it skip when it is missing. */
export const DAEMON_MAIN = join(import.meta.dirname, '..', '..', 'dist', 'daemon', 'main.js');
/** The same daemon bundled into one file: what the CLI's `platform daemon start` runs when it exists. */
export const DAEMON_BUNDLE = join(import.meta.dirname, '..', '..', 'dist', 'daemon', 'daemon.bundle.js');
export const PROCESS_ADMIN = { email: 'admin@example.test', password: 'Admin-Password-123' };

export interface DaemonProcess {
  child: ChildProcess;
  url: string;
  pid: number;
  /** Resolves when the process has exited (after a kill -9 too). */
  exited: Promise<void>;
  stderr(): string;
}

/**
 * Spawns the real daemon process on a state directory (port 0) and waits until its locator names
 * this process and /healthz answers: the path crash and restart tests need (kill -9, reconcile).
 */
export async function spawnDaemonProcess(home: string, env: Record<string, string> = {}, timeoutMs = 20_000, main = DAEMON_MAIN): Promise<DaemonProcess> {
  const locator = join(home, 'daemon.json');
  rmSync(locator, { force: true });
  const child = spawn(process.execPath, [main, '--port', '0'], {
    env: { ...process.env, PLATFORM_HOME: home, PLATFORM_ADMIN_EMAIL: PROCESS_ADMIN.email, PLATFORM_ADMIN_PASSWORD: PROCESS_ADMIN.password, PLATFORM_SANDBOX_POOL_TARGET: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.once('exit', () => r());
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${stderr}`);
    if (existsSync(locator)) {
      try {
        const info = JSON.parse(readFileSync(locator, 'utf8')) as { url: string; pid: number };
        if (info.pid === child.pid && (await fetch(`${info.url}/healthz`)).ok) return { child, url: info.url, pid: info.pid, exited, stderr: () => stderr };
      } catch {
        // being written, or not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`daemon did not become healthy within ${timeoutMs} ms: ${stderr}`);
}

/** Signs in with a password (the process admin by default) and returns the session token. */
export async function loginToken(url: string, who: { email: string; password: string } = PROCESS_ADMIN): Promise<string> {
  const r = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(who) });
  if (r.status !== 200) throw new Error(`login as ${who.email}: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { token: string }).token;
}

/** One JSON request to a spawned daemon with a bearer token: the status, the parsed body and the headers. */
export async function apiCall(url: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const r = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined, headers: r.headers };
}

/** Ends a spawned daemon at once (kill -9) if it still runs, and waits for its exit. */
export async function killDaemon(proc: DaemonProcess | undefined): Promise<void> {
  if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}

/**
 * A state directory for the spawned daemons of one describe block. Set `proc` to the daemon
 * running on it (tests restart it); after the block, that daemon is killed and the directory removed.
 */
export function spawnedHome(prefix: string): { home: string; proc?: DaemonProcess } {
  const state: { home: string; proc?: DaemonProcess } = { home: mkdtempSync(join(tmpdir(), prefix)) };
  afterAll(async () => {
    await killDaemon(state.proc);
    rmSync(state.home, { recursive: true, force: true });
  });
  return state;
}
