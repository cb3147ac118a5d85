import { randomBytes } from 'node:crypto';
import { constants } from 'node:os';
import { SANDBOX_OUTPUT_LIMIT } from '../../../api/sandbox.js';
import { SandboxChild, type Exit, type Launch } from './child.js';

/** What runner.py writes on stderr once its interpreter is up and waiting for code. */
const READY = Buffer.from('\x00platform-sandbox-ready\n');
/** runner.py's status when a file path escapes the working directory (its second lock). */
const RUNNER_REFUSED_PATH = 97;

export interface RunResult {
  stdout: string;
  stderr: string;
  exit_code: number;
  duration_ms: number;
  /** Why the run could not be carried out (spec 2 §7: 502), rather than a result of the code. */
  failed?: string;
}

/**
 * One prepared sandbox of the warm pool: its interpreter is started and blocked on the code pipe
 * (runner.py), so a run only sends code and collects output. It runs once and is destroyed.
 */
export class WarmSandbox {
  readonly child: SandboxChild;
  readonly ready: Promise<void>;

  constructor(
    readonly id: string,
    launch: Launch,
  ) {
    // Room for the end marker past the output limit (the output itself is cut at the limit).
    this.child = new SandboxChild(launch, { stdout: SANDBOX_OUTPUT_LIMIT + 64, stderr: SANDBOX_OUTPUT_LIMIT + 64 + READY.length });
    this.ready = new Promise<void>((resolve, reject) => {
      this.child.onOutput = (stream) => {
        if (stream !== 'stderr') return;
        const seen = this.child.stderr.take();
        const at = seen.indexOf(READY);
        if (at < 0) return;
        this.child.stderr.drop(at + READY.length);
        this.child.onOutput = undefined;
        resolve();
      };
      void this.child.exited.then(() => reject(new Error(this.child.stderr.take().toString('utf8').trim().slice(-500) || 'the sandbox exited before its interpreter was ready')));
    });
    this.ready.catch(() => undefined);
  }

  /** Sends the request, waits for the exit (or the deadline), and kills whatever is left. */
  async run(request: { code: string; files: Array<{ path: string; content_b64: string }> }, timeoutS: number): Promise<RunResult> {
    const t0 = performance.now();
    let stopped: 'deadline' | 'output' | undefined;
    this.child.onOverflow = () => {
      stopped ??= 'output';
      void this.child.kill();
    };
    const timer = setTimeout(() => {
      stopped ??= 'deadline';
      void this.child.kill();
    }, timeoutS * 1000);
    // The runner ends both streams with this marker and the status once the code is done; a run
    // that ends otherwise (killed, streams closed by the code) is read from the exit.
    const end = Buffer.from(`\0${randomBytes(8).toString('hex')}:`);
    const ended = new Promise<Exit>((resolve) => {
      this.child.onOutput = () => {
        const out = this.child.stdout.tail(end.length + 8);
        const err = this.child.stderr.tail(end.length + 8);
        const at = out.indexOf(end);
        if (at < 0 || err.indexOf(end) < 0 || !out.subarray(at).includes('\n')) return;
        resolve({ code: Number(out.subarray(at + end.length).toString().trim()), signal: null });
      };
    });
    this.child.send(JSON.stringify({ ...request, end: end.subarray(1, end.length - 1).toString() }));
    const exit = await Promise.race([ended, this.child.exited]);
    this.child.onOutput = undefined;
    clearTimeout(timer);
    for (const cap of [this.child.stdout, this.child.stderr]) {
      const all = cap.take();
      const at = all.lastIndexOf(end);
      cap.cut(Math.min(at >= 0 ? at : all.length, SANDBOX_OUTPUT_LIMIT));
    }
    // Processes the code left behind die with the sandbox: its PID namespace or container ends
    // with the runner, and the pool's release kills the cgroup (off the response's path).
    const duration_ms = Math.round(performance.now() - t0);
    const stdout = this.child.stdout.take().toString('utf8');
    let stderr = this.child.stderr.take().toString('utf8');
    if (stopped === 'deadline') return { stdout, stderr: `timed out after ${timeoutS}s`, exit_code: -1, duration_ms };
    if (stopped === 'output') {
      stderr += `${stderr.endsWith('\n') || !stderr ? '' : '\n'}sandbox: the run was stopped: its output passed ${SANDBOX_OUTPUT_LIMIT / 1024 / 1024} MiB`;
      return { stdout, stderr, exit_code: -1, duration_ms };
    }
    if (exit.code === RUNNER_REFUSED_PATH && /file path escapes/.test(stderr)) return { stdout, stderr, exit_code: exit.code, duration_ms, failed: `runner returned an error: ${stderr.trim()}` };
    if (exit.code === null && exit.signal === null) return { stdout, stderr, exit_code: -1, duration_ms, failed: `execution failed: ${stderr.trim()}` };
    const note = killedNote(exit);
    return { stdout, stderr: note ? `${stderr}${stderr && !stderr.endsWith('\n') ? '\n' : ''}${note}` : stderr, exit_code: exitCode(exit), duration_ms };
  }

  destroy(): Promise<void> {
    return this.child.kill();
  }
}

/** A signal death reads as the shell's 128 + signal number. */
export function exitCode(exit: Exit): number {
  if (exit.code !== null) return exit.code;
  const n = exit.signal ? constants.signals[exit.signal] : undefined;
  return n ? 128 + n : -1;
}

/** SIGKILL from inside is a limit of the sandbox (memory, usually): say so, as the output may be empty. */
function killedNote(exit: Exit): string {
  return exit.code === 137 || exit.signal === 'SIGKILL' ? 'sandbox: the code was killed (SIGKILL): it reached a limit of the sandbox (512 MiB of memory, 512 processes)' : '';
}
