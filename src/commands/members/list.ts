import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../cli/flags.js';
import { memberRoutes } from '../../api/members.js';

export default class MembersList extends BaseCommand {
  static override summary = "List a project's members, service accounts and break-glass grants";
  static override examples = ['<%= config.bin %> members list', '<%= config.bin %> members list --project shop-api --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(MembersList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(memberRoutes.list, { params: { projectID }, query: pageQuery(flags) });
    this.table(res.members, [
      { header: 'email', get: (m) => m.email },
      { header: 'role', get: (m) => m.role },
      { header: 'kind', get: (m) => m.kind },
      { header: 'external', get: (m) => m.external },
      { header: 'break-glass', get: (m) => (m.break_glass ? `${m.expired ? 'expired' : 'until'} ${m.expires_at}` : '') },
      { header: 'reason', get: (m) => m.reason },
      { header: 'id', get: (m) => m.user_id },
    ], 'no members');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
