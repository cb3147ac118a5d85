import { spawn, type ChildProcess } from 'node:child_process';

/**
 * One sandbox's process as the daemon sees it: the command that starts it (bwrap in its cgroup,
 * or the docker CLI), its three pipes, output kept up to a cap per stream, and a kill that takes
 * everything inside with it (the cgroup or the container, not just the direct child).
 */
export interface Launch {
  cmd: string;
  args: string[];
  env: Record<string, string>;
  /** Kills every process of the sandbox (cgroup kill, docker kill); idempotent. */
  kill(): Promise<void>;
  /** Frees what the sandbox held once it is gone (its cgroup). */
  release(): Promise<void>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

class Capped {
  private chunks: Buffer[] = [];
  size = 0;
  over = false;
  constructor(private readonly limit: number) {}
  push(b: Buffer): boolean {
    if (this.over) return false;
    const room = this.limit - this.size;
    if (b.length > room) {
      if (room > 0) this.chunks.push(b.subarray(0, room));
      this.size = this.limit;
      this.over = true;
      return false;
    }
    this.chunks.push(b);
    this.size += b.length;
    return true;
  }
  take(): Buffer {
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all;
  }
  /** The last n bytes (at most), without merging the chunks. */
  tail(n: number): Buffer {
    const parts: Buffer[] = [];
    let have = 0;
    for (let i = this.chunks.length - 1; i >= 0 && have < n; i--) {
      parts.unshift(this.chunks[i]!);
      have += this.chunks[i]!.length;
    }
    const all = Buffer.concat(parts);
    return all.subarray(Math.max(0, all.length - n));
  }
  /** Keeps the first n bytes. */
  cut(n: number): void {
    const all = this.take().subarray(0, n);
    this.chunks = [all];
    this.size = all.length;
  }
  /** Drops the first n bytes (a readiness marker). */
  drop(n: number): void {
    const all = this.take().subarray(n);
    this.chunks = [all];
    this.size = all.length;
  }
}

export class SandboxChild {
  readonly proc: ChildProcess;
  readonly stdout: Capped;
  readonly stderr: Capped;
  readonly exited: Promise<Exit>;
  done = false;
  private killed?: Promise<void>;
  /** Called on every output chunk, and when a stream passes its cap. */
  onOutput?: (stream: 'stdout' | 'stderr') => void;
  onOverflow?: (stream: 'stdout' | 'stderr') => void;

  constructor(
    readonly launch: Launch,
    limits: { stdout: number; stderr: number },
  ) {
    this.stdout = new Capped(limits.stdout);
    this.stderr = new Capped(limits.stderr);
    this.proc = spawn(launch.cmd, launch.args, { env: launch.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdin!.on('error', () => undefined);
    const feed = (name: 'stdout' | 'stderr', cap: Capped) => (b: Buffer) => {
      if (!cap.push(b)) this.onOverflow?.(name);
      this.onOutput?.(name);
    };
    this.proc.stdout!.on('data', feed('stdout', this.stdout));
    this.proc.stderr!.on('data', feed('stderr', this.stderr));
    this.exited = new Promise<Exit>((resolve) => {
      this.proc.once('error', (e) => {
        this.stderr.push(Buffer.from(`could not start the sandbox: ${e.message}\n`));
        this.done = true;
        resolve({ code: null, signal: null });
      });
      this.proc.once('close', (code, signal) => {
        this.done = true;
        resolve({ code, signal });
      });
    });
    void this.exited.then(() => this.launch.release());
  }

  send(data: string | Buffer, end = true): void {
    if (this.done) return;
    if (end) this.proc.stdin!.end(data);
    else this.proc.stdin!.write(data);
  }

  /** Kills the whole sandbox and waits until its process is gone. */
  kill(): Promise<void> {
    this.killed ??= (async () => {
      await this.launch.kill();
      try {
        this.proc.kill('SIGKILL');
      } catch {
        // already gone
      }
      await this.exited;
    })();
    return this.killed;
  }
}
