import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../cli/flags.js';
import { secretRoutes } from '../../api/secrets.js';

export default class SecretsList extends BaseCommand {
  static override summary = "List the project's shared secrets (names and versions, never values); one agent's own secrets: `platform agents secrets list`";
  static override examples = ['<%= config.bin %> secrets list', '<%= config.bin %> secrets list --project shop-api --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(SecretsList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(secretRoutes.list, { params: { projectID }, query: pageQuery(flags) });
    this.table(res.secrets, [
      { header: 'name', get: (s) => s.name },
      { header: 'version', get: (s) => s.current_version },
      { header: 'updated', get: (s) => s.updated_at },
      { header: 'created', get: (s) => s.created_at },
    ], 'no secrets');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
