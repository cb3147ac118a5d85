import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { vectorRoutes } from '../../api/vector.js';
import { UsageError } from '../../client/errors.js';
import { indexProject, jsonFlag, nameArg, projectFlag } from '../../cli/indexes.js';

export default class IndexesDeletePoints extends BaseCommand {
  static override summary = 'Delete points by ids or by filter';
  static override examples = [
    '<%= config.bin %> indexes delete-points docs --ids 1,2,3',
    `<%= config.bin %> indexes delete-points docs --filter '{"must":[{"key":"stale","match":{"value":true}}]}'`,
  ];
  static override args = { name: nameArg };
  static override flags = {
    project: projectFlag,
    ids: Flags.string({ description: 'comma-separated ids (unsigned integers or UUIDs)', exclusive: ['filter'] }),
    filter: Flags.string({ description: 'Qdrant filter as JSON (an empty filter is refused)' }),
    yes: yesFlag,
  };

  async run() {
    const { args, flags } = await this.parse(IndexesDeletePoints);
    await confirm(flags.yes, `delete the matching points from index ${args.name}`);
    if (!flags.ids && !flags.filter) throw new UsageError('say which points to delete', 'pass --ids or --filter');
    const ids = flags.ids?.split(',').map((s) => s.trim()).filter(Boolean).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const res = await (await this.client()).call(vectorRoutes.deletePoints, {
      params: { projectID: await indexProject(await this.client(), flags.project, flags.context), name: args.name },
      body: ids ? { ids } : { filter: jsonFlag('filter', flags.filter!) },
    });
    this.print(ids ? `deleted ${res.ids_requested} requested id${res.ids_requested === 1 ? '' : 's'} from ${args.name}` : `deleted the points matching the filter from ${args.name}`);
    return res;
  }
}
