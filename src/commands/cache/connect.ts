import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { cacheRoutes } from '../../api/cache.js';
import { projectFlag, resolveProjectId, savedCredential } from '../../cli/cache.js';
import { platformHome } from '../../client/contexts.js';
import { AbortError } from '../../client/errors.js';

export default class CacheConnect extends BaseCommand {
  static override summary = 'Open redis-cli on a cache instance';
  static override description =
    'The password goes to redis-cli through the REDISCLI_AUTH environment variable, never on a command line other users can see. ' +
    'It is the one this CLI saw at create or rotate; set REDISCLI_AUTH yourself to use another. Arguments after -- are passed to redis-cli.';
  static override examples = [
    '<%= config.bin %> cache connect sessions',
    '<%= config.bin %> cache connect sessions -- GET greeting',
    '<%= config.bin %> cache connect public-cache --tls',
  ];
  static override strict = false;
  static override args = { name: Args.string({ description: 'instance name', required: true }) };
  static override flags = {
    ...projectFlag,
    tls: Flags.boolean({ description: 'use the external TLS endpoint, trusting the local CA', default: false }),
  };

  async run() {
    const { args, flags, argv } = await this.parse(CacheConnect);
    const conn = await this.connect();
    const projectID = await resolveProjectId(conn.client, flags.project, flags.context);
    const view = await conn.client.call(cacheRoutes.get, { params: { projectID, name: args.name } });
    const password = process.env.REDISCLI_AUTH || (await savedCredential(conn.context.name, projectID, args.name))?.password;
    if (!password) {
      throw new AbortError(
        `no password known for ${args.name}: it is shown only at create and rotate`,
        `set REDISCLI_AUTH, or run \`platform cache rotate ${args.name}\` (restarts the instance) and connect again`,
      );
    }
    let target = ['-h', view.connection.host, '-p', String(view.connection.port)];
    if (flags.tls) {
      if (!view.external_endpoint) throw new AbortError(`${args.name} has no external endpoint`, 'create it with --external and wait until it is ready');
      const url = new URL(view.external_endpoint);
      // The cache CA file lies in the local daemon's state directory; a remote server's is not on this disk.
      const ca = conn.context.kind === 'local' ? join(platformHome(), 'keys', 'cache-ca.crt') : undefined;
      target = ['-h', url.hostname, '-p', url.port, '--tls', ...(ca && existsSync(ca) ? ['--cacert', ca] : [])];
    }
    const extra = (argv as string[]).slice(1);
    const child = spawn('redis-cli', [...target, ...extra], { stdio: 'inherit', env: { ...process.env, REDISCLI_AUTH: password } });
    const code = await new Promise<number>((resolve, reject) => {
      child.once('error', (e) => reject(new AbortError(`cannot run redis-cli: ${e.message}`, 'install it (Debian: apt-get install redis-tools)')));
      child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    });
    if (code !== 0) process.exitCode = code;
    return { name: args.name, exit_code: code };
  }
}
