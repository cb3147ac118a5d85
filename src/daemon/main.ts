import { rmSync, readFileSync } from 'node:fs';
import { configFromEnv } from './config.js';
import { statePaths, writePrivate } from './bootstrap.js';
import { startDaemon } from './server.js';
import { createLogger } from './logger.js';

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
  const config = configFromEnv(process.env, overrides);
  const daemon = await startDaemon(config, { log });
  const paths = statePaths(config.home);
  writePrivate(paths.locator, JSON.stringify({ version: config.version, url: daemon.url, pid: process.pid }) + '\n');
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
