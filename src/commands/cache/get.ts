import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { cacheRoutes } from '../../api/cache.js';
import { instanceFields, projectFlag, resolveProjectId } from '../../cli/cache.js';

export default class CacheGet extends BaseCommand {
  static override summary = 'Show one cache instance (never its password)';
  static override examples = ['<%= config.bin %> cache get sessions', '<%= config.bin %> cache get sessions --json'];
  static override args = { name: Args.string({ description: 'instance name', required: true }) };
  static override flags = { ...projectFlag };

  async run() {
    const { args, flags } = await this.parse(CacheGet);
    const client = await this.client();
    const projectID = await resolveProjectId(client, flags.project, flags.context);
    const view = await client.call(cacheRoutes.get, { params: { projectID, name: args.name } });
    this.fields(instanceFields(view));
    const pending = view.conditions.filter((c) => c.status !== 'True');
    if (pending.length) this.note(`\nconditions not met: ${pending.map((c) => `${c.type} (${c.reason ?? c.status})`).join(', ')}`);
    return view;
  }
}
