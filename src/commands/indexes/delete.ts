import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { vectorRoutes } from '../../api/vector.js';
import { buildPath } from '../../client/api-client.js';
import { indexProject, nameArg, projectFlag } from '../../cli/indexes.js';

export default class IndexesDelete extends BaseCommand {
  static override summary = 'Delete an index and every vector in it (admin; irreversible)';
  static override examples = ['<%= config.bin %> indexes delete docs --yes'];
  static override args = { name: nameArg };
  static override flags = {
    project: projectFlag,
    yes: yesFlag,
  };

  async run() {
    const { args, flags } = await this.parse(IndexesDelete);
    await confirm(flags.yes, `delete index ${args.name} and every vector in it (no snapshot or restore)`);
    const client = await this.client();
    const c = vectorRoutes.delete;
    await client.request(c.method, buildPath(c.path, { projectID: await indexProject(await this.client(), flags.project, flags.context), name: args.name }));
    this.print(`deleted index ${args.name}`);
    return { deleted: args.name };
  }
}
