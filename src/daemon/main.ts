import { closeSync, rmSync, readFileSync, writeSync } from 'node:fs';
import { configFromEnv } from './config.js';
import { statePaths, writePrivate, type BootstrapAdmin } from './bootstrap.js';
import { forgetEnv } from './environ.js';
import { startDaemon } from './server.js';
import { createLogger, type Logger } from './logger.js';
import { workloadIsolation } from './runtime/sandbox.js';

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

/**
 * The daemon process: `platform daemon start` runs this detached. It writes a locator file
 * ({version, url, pid}) once it is listening, and removes it on a graceful stop.
 */
/** Longest a graceful stop may take (the CLI waits 20 s before SIGKILL). */
const STOP_DEADLINE_MS = 15_000;

async function main(): Promise<void> {
  const log = createLogger();
  const portArg = process.argv.indexOf('--port');
  const overrides = portArg > 0 ? { port: Number(process.argv[portArg + 1]) } : {};
  const fd = Number(process.env[BOOTSTRAP_FD_ENV]);
  const channel = Number.isInteger(fd) && fd > 2 ? fd : undefined;
  delete process.env[BOOTSTRAP_FD_ENV];
  const config = configFromEnv(process.env, overrides);
  // Read once into the config; nothing the daemon starts may inherit it.
  forgetEnv('PLATFORM_ADMIN_PASSWORD');
  const daemon = await startDaemon(config, { log, onBootstrap: (admin) => announce(admin, channel, log) });
  const paths = statePaths(config.home);
  // `platform daemon status` reads how workloads are isolated from here (the agents area logs it).
  const isolation = await workloadIsolation(config.workloads);
  writePrivate(paths.locator, JSON.stringify({ version: config.version, url: daemon.url, internal_url: daemon.internalUrl, sandbox_url: daemon.sandboxUrl, pid: process.pid, isolation: isolation.state, isolation_detail: isolation.detail }) + '\n');
  log.info('daemon listening', { url: daemon.url, home: config.home, pid: process.pid });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('daemon stopping', { signal });
    // The stop is bounded here, below `platform daemon stop`'s grace before SIGKILL: past the
    // deadline the process exits anyway, and the exit hooks kill the workload instances still
    // running, which a SIGKILL of the daemon would leave behind.
    const deadline = setTimeout(() => {
      log.error('daemon stop did not finish in time; exiting', { deadline_ms: STOP_DEADLINE_MS });
      process.exit(1);
    }, STOP_DEADLINE_MS);
    deadline.unref();
    try {
      await daemon.close();
    } finally {
      try {
        const locator = JSON.parse(readFileSync(paths.locator, 'utf8')) as { pid: number };
        if (locator.pid === process.pid) rmSync(paths.locator, { force: true });
      } catch {
        // already gone
      }
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`daemon failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
