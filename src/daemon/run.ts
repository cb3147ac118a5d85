import { readFileSync, renameSync, rmSync } from 'node:fs';
import type { DaemonConfig } from './config.js';
import { statePaths, writePrivate, type BootstrapAdmin } from './bootstrap.js';
import { forgetEnv } from './environ.js';
import { startDaemon, type RunningDaemon } from './server.js';
import type { Logger } from './logger.js';
import type { AccessLog } from './http/access-log.js';
import { workloadIsolation } from './runtime/sandbox.js';

/** Longest the stop of workloads and stores may take once requests are done (the CLI's `daemon stop` waits 20 s). */
const STOP_DEADLINE_MS = 15_000;

export interface DaemonProcessOptions {
  config: DaemonConfig;
  log: Logger;
  onBootstrap?: (admin: BootstrapAdmin | undefined) => void;
  onSetupToken?: (setup: { token: string; expiresAt: number }) => void;
  accessLog?: AccessLog;
  /** How long a SIGTERM lets in-flight requests and streams finish on the public listener (0: none). */
  drainMs: number;
}

/**
 * The life of a daemon process, the detached local one (main.ts) and the foreground server
 * (`platform server start`) alike: start, write the locator ({version, url, pid}), and on SIGTERM
 * or SIGINT drain, stop workloads, remove the locator and exit 0. SIGHUP re-reads a server's TLS
 * certificate.
 */
export async function runDaemonProcess(o: DaemonProcessOptions): Promise<RunningDaemon> {
  const { config, log } = o;
  // Read once into the config; nothing the daemon starts may inherit it.
  forgetEnv('PLATFORM_ADMIN_PASSWORD');
  const daemon = await startDaemon(config, { log, onBootstrap: o.onBootstrap, onSetupToken: o.onSetupToken, accessLog: o.accessLog, reconcileInBackground: true });
  const paths = statePaths(config.home);
  const locator = (isolation?: { state: string; detail: string }) =>
    JSON.stringify({
      version: config.version,
      url: daemon.url,
      ...(daemon.publicUrl ? { public_url: daemon.publicUrl } : {}),
      internal_url: daemon.internalUrl,
      sandbox_url: daemon.sandboxUrl,
      pid: process.pid,
      ...(isolation ? { isolation: isolation.state, isolation_detail: isolation.detail } : {}),
    }) + '\n';
  // Written as soon as the daemon listens (the CLI waits for it), and again with the isolation
  // once probed; renamed into place so a reader never sees half a file.
  const writeLocator = (text: string) => {
    const tmp = `${paths.locator}.${process.pid}.tmp`;
    writePrivate(tmp, text);
    renameSync(tmp, paths.locator);
  };
  writeLocator(locator());
  // `platform daemon status` reads how workloads are isolated from the locator (the agents area
  // logs it): probed by a bwrap run once the locator is written, because spawning it holds the
  // event loop ~10 ms (the fork of the daemon), which the listener and the CLI need not wait for.
  void workloadIsolation(config.workloads).then((isolation) => {
    if (!stopping) writeLocator(locator(isolation));
  });
  log.info('daemon listening', { url: daemon.publicUrl ?? daemon.url, ...(daemon.publicUrl ? { loopback_url: daemon.url } : {}), home: config.home, pid: process.pid });

  let stopping = false;
  const stop = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log.info('daemon stopping', { signal, drain_ms: o.drainMs });
    // The stop is bounded: past the deadline the process exits anyway, and the exit hooks kill
    // the workload instances still running, which a SIGKILL of the daemon would leave behind.
    const hardDeadline = o.drainMs + STOP_DEADLINE_MS;
    const deadline = setTimeout(() => {
      log.error('daemon stop did not finish in time; exiting', { deadline_ms: hardDeadline });
      process.exit(1);
    }, hardDeadline);
    deadline.unref();
    try {
      await daemon.close({ drainMs: o.drainMs });
    } finally {
      try {
        const locator = JSON.parse(readFileSync(paths.locator, 'utf8')) as { pid: number };
        if (locator.pid === process.pid) rmSync(paths.locator, { force: true });
      } catch {
        // already gone
      }
      log.info('daemon stopped', { signal });
      process.exit(exitCode);
    }
  };
  // An area that cannot start ends the daemon as a failed start always did, only now after listening.
  daemon.reconciled.then(
    () => log.info('daemon started every area', { ms: daemon.app.ctx.startup.report().areas_started_ms }),
    (err: Error) => {
      log.error('daemon failed to start', { error: String(err?.stack ?? err) });
      process.stderr.write(`daemon failed to start: ${err?.stack ?? err}\n`);
      void stop('start failure', 1);
    },
  );
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A server takes SIGHUP as "reload" (systemd's ExecReload); the detached daemon keeps the default.
  if (config.server) process.on('SIGHUP', () => (daemon.reloadTls ? void daemon.reloadTls() : log.info('SIGHUP: no TLS certificate to reload')));
  return daemon;
}
