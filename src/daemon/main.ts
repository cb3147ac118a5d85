import { rmSync, readFileSync } from 'node:fs';
import { configFromEnv } from './config.js';
import { statePaths, writePrivate } from './bootstrap.js';
import { startDaemon } from './server.js';
import { createLogger } from './logger.js';
import { workloadIsolation } from './runtime/sandbox.js';

/**
 * The daemon process: `platform daemon start` runs this detached. It writes a locator file
 * ({version, url, pid}) once it is listening, and removes it on a graceful stop.
 */
async function main(): Promise<void> {
  const log = createLogger();
  const portArg = process.argv.indexOf('--port');
  const overrides = portArg > 0 ? { port: Number(process.argv[portArg + 1]) } : {};
  const config = configFromEnv(process.env, overrides);
  const daemon = await startDaemon(config, { log });
  const paths = statePaths(config.home);
  // `platform daemon status` reads how workloads are isolated from here (the agents area logs it).
  const isolation = await workloadIsolation(config.workloads);
  writePrivate(paths.locator, JSON.stringify({ version: config.version, url: daemon.url, pid: process.pid, isolation: isolation.state, isolation_detail: isolation.detail }) + '\n');
  log.info('daemon listening', { url: daemon.url, home: config.home, pid: process.pid });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('daemon stopping', { signal });
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
