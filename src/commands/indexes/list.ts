import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { vectorRoutes } from '../../api/vector.js';
import { indexColumns, indexProject, projectFlag } from '../../cli/indexes.js';
import { withLiveCounts } from '../../client/index-counts.js';

export default class IndexesList extends BaseCommand {
  static override summary = 'List the vector indexes of a project, with live point counts';
  static override examples = ['<%= config.bin %> indexes list', '<%= config.bin %> indexes list --project my-app --json'];
  static override flags = {
    project: projectFlag,
    'page-size': Flags.integer({ description: 'indexes per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { flags } = await this.parse(IndexesList);
    const client = await this.client();
    const projectID = await indexProject(client, flags.project, flags.context);
    const page = await client.call(vectorRoutes.list, { params: { projectID }, query: { page_size: flags['page-size'], page_token: flags['page-token'] } });
    const res = { ...page, indexes: await withLiveCounts(client, projectID, page.indexes) };
    this.table(res.indexes, indexColumns, 'no indexes');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
