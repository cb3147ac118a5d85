import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  json: any;
}

/**
 * A CLI sandbox: its own state directory, so the daemon the CLI spawns, its contexts and its
 * credentials are private to the test. `stop()` stops the daemon and removes the directory.
 */
export function cliSandbox(env: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), 'platform-cli-'));
  const baseEnv = {
    PLATFORM_HOME: home,
    PLATFORM_PORT: '0',
    PLATFORM_ADMIN_EMAIL: 'admin@example.test',
    PLATFORM_ADMIN_PASSWORD: 'Admin-Password-123',
    PLATFORM_NO_KEYCHAIN: '1',
    NO_COLOR: '1',
    // No warm code sandboxes unless a test asks (see test/helpers/daemon.ts).
    PLATFORM_SANDBOX_POOL_TARGET: '0',
    ...env,
  };
  const run = async (args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> => {
    const r = await execa('node', [BIN, ...args], {
      env: { ...baseEnv, ...opts.env },
      extendEnv: true,
      input: opts.input,
      stdin: opts.input === undefined ? 'ignore' : undefined,
      reject: false,
      timeout: 60_000,
    });
    let json: unknown;
    try {
      json = JSON.parse(r.stdout);
    } catch {
      json = undefined;
    }
    return { exitCode: r.exitCode ?? 1, stdout: r.stdout, stderr: r.stderr, json };
  };
  return {
    home,
    /** The environment every run gets, for tests that spawn a long-running command themselves. */
    env: baseEnv,
    run,
    /** SIGKILLs the sandbox's daemon (a crash) and waits until it is gone; returns its pid. */
    async killDaemon(): Promise<number> {
      const { pid } = (await run(['daemon', 'status', '--json'])).json as { pid: number };
      process.kill(pid, 'SIGKILL');
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        try {
          process.kill(pid, 0);
        } catch {
          return pid;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`daemon ${pid} still alive 10 s after SIGKILL`);
    },
    async stop() {
      await run(['daemon', 'stop']);
      rmSync(home, { recursive: true, force: true });
    },
  };
}
