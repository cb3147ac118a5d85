import { closeSync, writeSync } from 'node:fs';
import { configFromEnv } from './config.js';
import type { BootstrapAdmin } from './bootstrap.js';
import { runDaemonProcess } from './run.js';
import { createLogger, type Logger } from './logger.js';

/** `platform daemon start` passes a pipe on this descriptor to learn the bootstrap admin. */
const BOOTSTRAP_FD_ENV = 'PLATFORM_BOOTSTRAP_FD';

/**
 * Shows the bootstrap admin of a first start once, never writing it to disk: to the CLI that
 * started us through its pipe (one JSON line, `{}` when there is nothing to tell, then closed
 * before any workload or cache is spawned so none inherits it), or, run by hand, on stderr
 * when the password was generated.
 */
function announce(admin: BootstrapAdmin | undefined, fd: number | undefined, log: Logger): void {
  if (fd !== undefined) {
    try {
      writeSync(fd, JSON.stringify(admin ?? {}) + '\n');
      closeSync(fd);
    } catch (e) {
      log.warn('could not hand the bootstrap admin to the CLI that started the daemon', { error: (e as Error).message });
    }
    return;
  }
  if (admin?.generated) {
    process.stderr.write(
      `bootstrap admin: ${admin.email}\npassword: ${admin.password}\n(shown once and not stored; sign in with \`platform login --email ${admin.email}\`, or set PLATFORM_ADMIN_PASSWORD before the first start)\n`,
    );
  }
}

/** What the code cache's loader (code-cache.ts) wants to hear from the daemon it runs. */
export interface DaemonMainHooks {
  /** Every area has started: the start path's functions are compiled, worth caching now. */
  onStarted?: () => void;
}

/**
 * The daemon process: `platform daemon start` runs this detached. It writes a locator file
 * ({version, url, pid}) once it is listening, and removes it on a graceful stop (run.ts).
 */
async function main(hooks: DaemonMainHooks): Promise<void> {
  const log = createLogger();
  const portArg = process.argv.indexOf('--port');
  const overrides = portArg > 0 ? { port: Number(process.argv[portArg + 1]) } : {};
  const fd = Number(process.env[BOOTSTRAP_FD_ENV]);
  const channel = Number.isInteger(fd) && fd > 2 ? fd : undefined;
  delete process.env[BOOTSTRAP_FD_ENV];
  const config = configFromEnv(process.env, overrides);
  // The local daemon's stop cuts open connections at once: only its own CLI talks to it.
  const daemon = await runDaemonProcess({ config, log, onBootstrap: (admin) => announce(admin, channel, log), drainMs: 0 });
  // A failed area start is run.ts's to report (it ends the process).
  if (hooks.onStarted) daemon.reconciled.then(hooks.onStarted, () => {});
}

/**
 * Runs the daemon process: from the module tree's entry (main.ts) and from the bundle's loader
 * (code-cache.ts), which passes hooks.
 */
export function runDaemonMain(hooks: DaemonMainHooks = {}): void {
  main(hooks).catch((err) => {
    process.stderr.write(`daemon failed to start: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
