import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, projectFlag, projectOrDefault } from '../../cli/project-flag.js';
import { invitationRoutes } from '../../api/invitations.js';

export default class InvitationsList extends BaseCommand {
  static override summary = "List a project's invitations, newest first";
  static override examples = [
    '<%= config.bin %> invitations list',
    '<%= config.bin %> invitations list --project web --json',
    '<%= config.bin %> invitations list --page-size 20 --page-token TOKEN',
  ];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(InvitationsList);
    const res = await (await this.client()).call(invitationRoutes.list, {
      params: { projectID: projectOrDefault(flags.project, flags.context) },
      query: { page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(
      res.invitations,
      [
        { header: 'email', get: (i) => i.email },
        { header: 'role', get: (i) => i.role },
        { header: 'state', get: (i) => i.state },
        { header: 'expires', get: (i) => i.expires_at },
        { header: 'invited by', get: (i) => i.invited_by },
        { header: 'id', get: (i) => i.id },
      ],
      'no invitations',
    );
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
