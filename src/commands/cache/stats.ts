import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { cacheRoutes } from '../../api/cache.js';
import { projectFlag, resolveProjectId } from '../../cli/cache.js';

export default class CacheStats extends BaseCommand {
  static override summary = 'Live statistics of a cache instance (read from the server with INFO)';
  static override examples = ['<%= config.bin %> cache stats sessions', '<%= config.bin %> cache stats sessions --json'];
  static override args = { name: Args.string({ description: 'instance name', required: true }) };
  static override flags = { ...projectFlag };

  async run() {
    const { args, flags } = await this.parse(CacheStats);
    const client = await this.client();
    const projectID = await resolveProjectId(client, flags.project, flags.context);
    const stats = await client.call(cacheRoutes.stats, { params: { projectID, name: args.name } });
    const { note, ...rest } = stats;
    this.fields(rest);
    this.note(`\n${note}`);
    return stats;
  }
}
