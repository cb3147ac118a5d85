import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { cacheRoutes } from '../../api/cache.js';
import { forgetCredential, projectFlag, resolveProjectId } from '../../cli/cache.js';
import { ask, requireTty } from '../../cli/prompt.js';
import { AbortError } from '../../client/errors.js';

export default class CacheDelete extends BaseCommand {
  static override summary = 'Delete a cache instance and its data (admin; irreversible)';
  static override examples = ['<%= config.bin %> cache delete sessions', '<%= config.bin %> cache delete sessions --yes --json'];
  static override args = { name: Args.string({ description: 'instance name', required: true }) };
  static override flags = { ...projectFlag, yes: Flags.boolean({ char: 'y', description: 'do not ask for confirmation', default: false }) };

  async run() {
    const { args, flags } = await this.parse(CacheDelete);
    if (!flags.yes) {
      requireTty('the confirmation prompt', `pass --yes to delete ${args.name} without asking`);
      const typed = (await ask(`Delete ${args.name} and all its data? This cannot be undone. Type the name to confirm: `)).trim();
      if (typed !== args.name) throw new AbortError('not deleted: the name did not match');
    }
    const conn = await this.connect();
    const projectID = await resolveProjectId(conn.client, flags.project, flags.context);
    const res = await conn.client.call(cacheRoutes.delete, { params: { projectID, name: args.name } });
    await forgetCredential(conn.context.name, projectID, args.name);
    this.print(`${res.name}: ${res.state} (${res.note})`);
    return res;
  }
}
