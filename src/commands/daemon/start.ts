import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { startDaemon } from '../../client/local-daemon.js';
import { getContext, platformHome } from '../../client/contexts.js';
import { adoptBootstrap, bootstrapNotice } from '../../client/session.js';

export default class DaemonStart extends BaseCommand {
  static override summary = 'Start the local daemon (the embedded platform)';
  static override description = 'Runs the daemon detached with its state in PLATFORM_HOME (default ~/.platform) and waits until it is healthy. A second start reports the running daemon. On the first start the bootstrap admin is created with PLATFORM_ADMIN_PASSWORD, or a generated password shown only then; the password is stored nowhere, and the CLI keeps an API key for the local context in the OS keychain (a 0600 file where there is none).';
  static override examples = ['<%= config.bin %> daemon start', '<%= config.bin %> daemon start --port 0 --json', '<%= config.bin %> daemon start --driver docker', '<%= config.bin %> daemon start --isolation none', 'PLATFORM_HOME=/tmp/p <%= config.bin %> daemon start'];
  static override flags = {
    port: Flags.integer({ description: 'port on 127.0.0.1 (0 picks a free one)', env: 'PLATFORM_PORT', default: 7070, min: 0, max: 65535 }),
    driver: Flags.string({ description: 'runtime driver for agents and functions: process (default) or docker (needs a Docker engine)', env: 'PLATFORM_DRIVER', options: ['process', 'docker'] }),
    isolation: Flags.string({
      description: 'how the process driver isolates workloads: sandbox (default, needs bubblewrap) or none (workloads run as the daemon user and can read its state directory)',
      env: 'PLATFORM_ISOLATION',
      options: ['sandbox', 'none'],
    }),
  };

  async run() {
    const { flags } = await this.parse(DaemonStart);
    const env = { ...(flags.driver ? { PLATFORM_DRIVER: flags.driver } : {}), ...(flags.isolation ? { PLATFORM_ISOLATION: flags.isolation } : {}) };
    const info = await startDaemon({ port: flags.port, env });
    this.print(info.alreadyRunning ? `daemon already running at ${info.url} (pid ${info.pid})` : info.url);
    this.note(info.alreadyRunning ? '' : `state directory: ${platformHome()}`);
    if (info.isolation === 'unavailable' || info.isolation === 'none') process.stderr.write(`warning: workload isolation ${info.isolation}: ${info.isolation_detail}\n`);
    // First start: the bootstrap admin is shown once (when generated) and the CLI keeps a key, never the password.
    let admin: { email: string; password?: string; credential_stored_in?: string; sign_in_error?: string } | undefined;
    if (info.bootstrap) {
      const kept = await adoptBootstrap(getContext('local'), info.url, info.bootstrap);
      if (info.bootstrap.generated || kept.error) this.note(bootstrapNotice(info.bootstrap, kept));
      admin = {
        email: info.bootstrap.email,
        ...(info.bootstrap.generated ? { password: info.bootstrap.password } : {}),
        ...(kept.storedIn ? { credential_stored_in: kept.storedIn } : { sign_in_error: kept.error }),
      };
    }
    return { url: info.url, pid: info.pid, already_running: info.alreadyRunning, isolation: info.isolation ?? null, ...(admin ? { bootstrap_admin: admin } : {}) };
  }
}
