import { BaseCommand } from '../../cli/base-command.js';
import { vectorRoutes } from '../../api/vector.js';
import { INDEX_FIELD_ORDER, indexProject, nameArg, projectFlag } from '../../cli/indexes.js';

export default class IndexesGet extends BaseCommand {
  static override summary = 'Show one vector index';
  static override examples = ['<%= config.bin %> indexes get docs', '<%= config.bin %> indexes get docs --json'];
  static override args = { name: nameArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(IndexesGet);
    const res = await (await this.client()).call(vectorRoutes.get, { params: { projectID: await indexProject(await this.client(), flags.project, flags.context), name: args.name } });
    this.fields(res.index, INDEX_FIELD_ORDER);
    return res;
  }
}
