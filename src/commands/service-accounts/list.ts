import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, projectFlag, projectOrDefault } from '../../cli/project-flag.js';
import { serviceAccountRoutes } from '../../api/service-accounts.js';

export default class ServiceAccountsList extends BaseCommand {
  static override summary = "List a project's service accounts";
  static override examples = ['<%= config.bin %> service-accounts list', '<%= config.bin %> service-accounts list --project web --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(ServiceAccountsList);
    const res = await (await this.client()).call(serviceAccountRoutes.list, {
      params: { projectID: projectOrDefault(flags.project, flags.context) },
      query: { page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(
      res.service_accounts,
      [
        { header: 'name', get: (s) => s.name },
        { header: 'role', get: (s) => s.role },
        { header: 'email', get: (s) => s.email },
        { header: 'display name', get: (s) => s.display_name },
        { header: 'disabled', get: (s) => s.disabled },
        { header: 'created', get: (s) => s.created_at },
      ],
      'no service accounts',
    );
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
