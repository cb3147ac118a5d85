import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');

/** A port free right now on the address (the server is told it; port 0 would hide it from the test). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  home: string;
  /** The public listener's address, from the "daemon listening" log line. */
  url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** Resolves when stderr has a line matching the pattern (now or later). */
  waitForStderr(re: RegExp, timeoutMs?: number): Promise<string>;
}

/** Spawns the real `platform server start` with a fresh state directory and waits until it listens. */
export async function startServer(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<ServerProcess> {
  const home = mkdtempSync(join(tmpdir(), 'platform-server-'));
  const child = spawn(process.execPath, [BIN, 'server', 'start', '--home', home, ...args], {
    env: { ...process.env, PLATFORM_SANDBOX_POOL_TARGET: '0', PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => {
    err += b.toString();
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const waitForStderr = (re: RegExp, ms = timeoutMs) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no stderr line matching ${re} within ${ms} ms:\n${err}`)), ms);
      const check = () => {
        const m = re.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        } else if (child.exitCode !== null) {
          clearTimeout(timer);
          reject(new Error(`server exited ${child.exitCode} before ${re}:\n${err}`));
        } else waiters.push(check);
      };
      check();
      void exited.then(() => waiters.length && check());
    });
  const line = await waitForStderr(/\{[^\n]*"msg":"daemon listening"[^\n]*\}/, timeoutMs);
  const url = (JSON.parse(line) as { url: string }).url;
  return { child, home, url, stdout: () => out, stderr: () => err, exited, waitForStderr };
}

export { testCa } from '../helpers/test-ca.js';

/** Stops a server started by a test if it still runs (SIGTERM, then SIGKILL after a while). */
export async function stopServer(s: ServerProcess | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGTERM');
  const t = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
  await s.exited;
  clearTimeout(t);
}
