import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { cacheRoutes } from '../../api/cache.js';
import { projectFlag, resolveProjectId, saveCredential } from '../../cli/cache.js';

export default class CacheRotate extends BaseCommand {
  static override summary = 'Rotate the password of a cache instance (admin); the instance restarts at once';
  static override description = 'The previous password keeps working until the restart that applies the new one completes.';
  static override examples = ['<%= config.bin %> cache rotate sessions', '<%= config.bin %> cache rotate sessions --json'];
  static override args = { name: Args.string({ description: 'instance name', required: true }) };
  static override flags = { ...projectFlag };

  async run() {
    const { args, flags } = await this.parse(CacheRotate);
    const conn = await this.connect();
    const projectID = await resolveProjectId(conn.client, flags.project, flags.context);
    const res = await conn.client.call(cacheRoutes.rotate, { params: { projectID, name: args.name }, body: {} });
    await saveCredential(conn.context.name, projectID, args.name, res.credential);
    this.fields({ username: res.credential.username, password: res.credential.password, uri: res.credential.uri, external_uri: res.credential.external_uri });
    this.note(`\n${res.note}`);
    return res;
  }
}
