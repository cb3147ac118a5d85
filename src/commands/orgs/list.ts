import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery } from '../../cli/flags.js';
import { orgRoutes } from '../../api/orgs.js';

export default class OrgsList extends BaseCommand {
  static override summary = 'List organizations (platform admin)';
  static override examples = ['<%= config.bin %> orgs list', '<%= config.bin %> orgs list --json'];
  static override flags = { ...pageFlags };

  async run() {
    const { flags } = await this.parse(OrgsList);
    const res = await (await this.client()).call(orgRoutes.list, { query: pageQuery(flags) });
    this.table(res.orgs, [
      { header: 'slug', get: (o) => o.slug },
      { header: 'name', get: (o) => o.name },
      { header: 'projects', get: (o) => o.projects },
      { header: 'users', get: (o) => o.users },
      { header: 'id', get: (o) => o.id },
    ], 'no organizations');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
