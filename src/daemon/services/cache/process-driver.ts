import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import type { CacheDriver, LaunchSpec, ServerHandle } from './driver.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when the pid is a live process (a zombie counts as dead). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/**
 * Runs each instance as a redis-server child in its own process group, detached so it outlives
 * a daemon restart and can be re-adopted through its pid file. stdout is unused (redis logs to
 * its logfile); stderr goes to a file because config errors are printed before the log opens.
 */
export class ProcessDriver implements CacheDriver {
  readonly name = 'process' as const;
  private version?: Promise<string | undefined>;

  constructor(private readonly bin: string) {}

  async launch(spec: LaunchSpec): Promise<ServerHandle> {
    const err = openSync(spec.paths.stderr, 'a');
    const child = spawn(this.bin, [spec.paths.conf], { detached: true, stdio: ['ignore', 'ignore', err] });
    closeSync(err);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (e) => reject(new Error(`cannot start ${this.bin}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)));
    });
    child.unref();
    const pid = child.pid!;
    writeFileSync(spec.paths.pid, `${pid}\n`);
    const exited = new Promise<string>((resolve) =>
      child.once('exit', (code, signal) => resolve(`redis-server exited (${signal ? `signal ${signal}` : `code ${code}`})`)),
    );
    return { pid, exited };
  }

  async find(spec: LaunchSpec): Promise<ServerHandle | undefined> {
    let pid: number;
    try {
      pid = Number(readFileSync(spec.paths.pid, 'utf8').trim());
    } catch {
      return undefined;
    }
    if (!pid || !pidAlive(pid)) return undefined;
    // Guard against pid reuse: redis-server rewrites its title to "redis-server 127.0.0.1:<port>".
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('redis-server') || !cmdline.includes(`:${spec.port}`)) return undefined;
    } catch {
      return undefined;
    }
    return { pid };
  }

  async alive(h: ServerHandle): Promise<boolean> {
    return h.pid !== undefined && pidAlive(h.pid);
  }

  async stop(h: ServerHandle, graceMs: number): Promise<void> {
    const pid = h.pid;
    if (pid === undefined || !pidAlive(pid)) return;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    const deadline = Date.now() + graceMs;
    while (pidAlive(pid) && Date.now() < deadline) await sleep(20);
    if (pidAlive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      while (pidAlive(pid) && Date.now() < deadline + 2000) await sleep(20);
    }
  }

  /** Runs the binary afresh each time: a server removed or broken after start shows at once. */
  async check(): Promise<string> {
    const v = await this.runVersion();
    if (v) this.version = Promise.resolve(v);
    return v ? 'ok' : `${this.bin} is not installed or does not run`;
  }

  serverVersion(): Promise<string | undefined> {
    this.version ??= this.runVersion();
    return this.version;
  }

  private runVersion(): Promise<string | undefined> {
    return new Promise((resolve) =>
      execFile(this.bin, ['--version'], { timeout: 5000 }, (err, stdout) => resolve(err ? undefined : /v=(\S+)/.exec(stdout)?.[1])),
    );
  }
}

