import { BaseCommand } from '../../cli/base-command.js';
import { vectorRoutes } from '../../api/vector.js';
import { INDEX_FIELD_ORDER, indexProject, nameArg, projectFlag } from '../../cli/indexes.js';
import { withLiveCounts } from '../../client/index-counts.js';

export default class IndexesGet extends BaseCommand {
  static override summary = 'Show one vector index';
  static override examples = ['<%= config.bin %> indexes get docs', '<%= config.bin %> indexes get docs --json'];
  static override args = { name: nameArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(IndexesGet);
    const client = await this.client();
    const projectID = await indexProject(client, flags.project, flags.context);
    const got = await client.call(vectorRoutes.get, { params: { projectID, name: args.name } });
    const res = { index: (await withLiveCounts(client, projectID, [got.index]))[0]! };
    this.fields(res.index, INDEX_FIELD_ORDER);
    return res;
  }
}
