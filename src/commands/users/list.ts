import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery } from '../../cli/flags.js';
import { userRoutes } from '../../api/users.js';

export default class UsersList extends BaseCommand {
  static override summary = 'List every account (platform admin)';
  static override examples = ['<%= config.bin %> users list', '<%= config.bin %> users list --json', '<%= config.bin %> users list --page-size 20'];
  static override flags = { ...pageFlags };

  async run() {
    const { flags } = await this.parse(UsersList);
    const res = await (await this.client()).call(userRoutes.list, { query: pageQuery(flags) });
    this.table(res.users, [
      { header: 'email', get: (u) => u.email },
      { header: 'role', get: (u) => u.role },
      { header: 'external', get: (u) => u.external },
      { header: 'must change password', get: (u) => u.must_change_password },
      { header: 'projects', get: (u) => u.projects },
      { header: 'agents', get: (u) => u.agent_count },
      { header: 'id', get: (u) => u.id },
    ], 'no users');
    if (res.unowned_agents.length) this.note(`agents without an owner: ${res.unowned_agents.join(', ')}`);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
