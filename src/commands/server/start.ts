import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../client/errors.js';
import { findDaemon } from '../../client/local-daemon.js';
import { platformHome } from '../../client/contexts.js';

export default class ServerStart extends BaseCommand {
  static override summary = 'Run the platform for a team, in the foreground (systemd, containers)';
  static override description =
    'The same platform as `daemon start`, served on --listen instead of loopback only. A listener other than loopback needs TLS (--tls-cert and --tls-key, re-read on SIGHUP) or --behind-proxy naming the reverse proxy that terminates TLS; its X-Forwarded-For, -Proto and -Host are believed from those addresses only. Nobody is signed in by the server itself: on a first start it prints a one-time setup token on stderr (unless PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD are set), which `platform login --setup-token` spends to create the first admin. One JSON access line per request goes to stdout, the daemon log to stderr. SIGTERM stops accepting, lets requests and streams finish for --shutdown-timeout seconds, stops workloads and exits 0. Every flag can also come from the environment variable shown beside it.';
  static override examples = [
    '<%= config.bin %> server start --listen 0.0.0.0:8443 --tls-cert /etc/platform/cert.pem --tls-key /etc/platform/key.pem --public-url https://platform.example.com:8443 --apps-domain apps.example.com',
    '<%= config.bin %> server start --listen 127.0.0.1:7070 --behind-proxy 10.0.0.5/32 --public-url https://platform.example.com --apps-domain apps.example.com',
    'PLATFORM_LISTEN=0.0.0.0:8443 PLATFORM_TLS_CERT=cert.pem PLATFORM_TLS_KEY=key.pem <%= config.bin %> server start --home /var/lib/platform',
  ];
  static override flags = {
    listen: Flags.string({ description: 'HOST:PORT of the public listener', env: 'PLATFORM_LISTEN', default: '127.0.0.1:7070' }),
    'tls-cert': Flags.string({ description: 'PEM certificate chain; serve https', env: 'PLATFORM_TLS_CERT' }),
    'tls-key': Flags.string({ description: 'PEM private key of --tls-cert', env: 'PLATFORM_TLS_KEY' }),
    'public-url': Flags.string({ description: 'the address people use, for links and workload addresses', env: 'PLATFORM_PUBLIC_URL' }),
    'apps-domain': Flags.string({ description: 'workloads answer at <name>-<short>.<apps-domain> (default apps.localhost)', env: 'PLATFORM_APPS_DOMAIN' }),
    'gateway-domain': Flags.string({ description: "the gateway's shared zone: endpoints at <name>-<short>.<gateway-domain>", env: 'PLATFORM_GATEWAY_DOMAIN' }),
    'behind-proxy': Flags.string({ description: 'CIDR[,CIDR] of the reverse proxy in front; its X-Forwarded-* headers are trusted', env: 'PLATFORM_BEHIND_PROXY' }),
    'shutdown-timeout': Flags.integer({ description: 'seconds SIGTERM lets requests and streams finish', env: 'PLATFORM_SHUTDOWN_TIMEOUT', default: 30, min: 0 }),
    home: Flags.string({ description: 'state directory (default ~/.platform)', env: 'PLATFORM_HOME' }),
    driver: Flags.string({ description: 'runtime driver for agents and functions', env: 'PLATFORM_DRIVER', options: ['process', 'docker'] }),
    isolation: Flags.string({ description: 'how the process driver isolates workloads', env: 'PLATFORM_ISOLATION', options: ['sandbox', 'none'] }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ServerStart);
    // The daemon's modules load only here: every other command's start stays as light as it was.
    const { serverModeConfig, ServerOptionError } = await import('../../daemon/serving/options.js');
    let server;
    try {
      server = serverModeConfig({
        listen: flags.listen,
        tlsCert: flags['tls-cert'],
        tlsKey: flags['tls-key'],
        publicUrl: flags['public-url'],
        behindProxy: flags['behind-proxy'],
        shutdownTimeoutSeconds: flags['shutdown-timeout'],
      });
    } catch (e) {
      if (e instanceof ServerOptionError) throw new UsageError(e.message);
      throw e;
    }
    // The daemon's settings come from the environment, as for `daemon start`: the flags join it.
    const set = (name: string, value: string | undefined) => value !== undefined && (process.env[name] = value);
    set('PLATFORM_HOME', flags.home);
    set('PLATFORM_APPS_DOMAIN', flags['apps-domain']);
    set('PLATFORM_GATEWAY_DOMAIN', flags['gateway-domain']);
    set('PLATFORM_DRIVER', flags.driver);
    set('PLATFORM_ISOLATION', flags.isolation);
    // Two daemons on one state directory would share a database and fight over workloads.
    const running = await findDaemon();
    if (running) throw new UsageError(`a daemon already runs on ${platformHome()} (pid ${running.pid}, ${running.url})`, 'stop it with `platform daemon stop`, or give another --home');
    const { startServer } = await import('../../daemon/serving/start.js');
    try {
      await startServer(server);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL') throw new UsageError(`cannot listen on ${flags.listen}: ${err.message}`);
      if (err.code === 'ENOENT' || err.message?.includes('PEM') || err.message?.includes('key values mismatch')) throw new UsageError(`cannot use the TLS certificate: ${err.message}`);
      throw e;
    }
    // Runs until a signal stops it (run.ts exits the process).
    await new Promise(() => {});
  }
}
