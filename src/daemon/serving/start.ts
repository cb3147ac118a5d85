import { configFromEnv, type ServerModeConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { jsonLines } from '../http/access-log.js';
import { runDaemonProcess } from '../run.js';

/**
 * `platform server start` after its flags are checked: the daemon of `daemon start` in this
 * process, with the public listener, the setup token, the access log on stdout and a draining stop.
 */
export async function startServer(server: ServerModeConfig): Promise<void> {
  const log = createLogger();
  // The loopback listener workloads call (SVC_API_URL) takes a free port: the public one is --listen.
  const config = configFromEnv(process.env, { port: 0, server });
  await runDaemonProcess({
    config,
    log,
    drainMs: server.shutdownTimeoutMs,
    accessLog: jsonLines((line) => process.stdout.write(line)),
    onBootstrap: (admin) => admin && log.info('first admin created from PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD', { email: admin.email }),
    onSetupToken: ({ token, expiresAt }) =>
      process.stderr.write(
        `setup token: ${token}\n` +
          `(one use, until ${new Date(expiresAt).toISOString()}; stored nowhere. From the machine you will administer from, run \`platform login --setup-token\` against this server to create the first admin. A restart prints a new token while this one is unused.)\n`,
      ),
  });
}
