import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectOrDefault } from '../../cli/project-flag.js';
import { invitationRoutes } from '../../api/invitations.js';

export default class InvitationsCreate extends BaseCommand {
  static override summary = 'Invite an e-mail to a project';
  static override description =
    'When an account with that e-mail exists it is added as a project member at once and no invitation is made. Otherwise the invitation token is printed once: send the accept link to the invitee.';
  static override examples = [
    '<%= config.bin %> invitations create ana@example.com',
    '<%= config.bin %> invitations create ana@example.com --role admin --project web',
    '<%= config.bin %> invitations create ana@example.com --json',
  ];
  static override args = { email: Args.string({ required: true, description: 'e-mail to invite' }) };
  static override flags = {
    project: projectFlag,
    role: Flags.string({ description: 'project role to grant', options: ['admin', 'member'], default: 'member' }),
  };

  async run() {
    const { args, flags } = await this.parse(InvitationsCreate);
    const conn = await this.connect();
    const res = await conn.client.call(invitationRoutes.create, {
      params: { projectID: projectOrDefault(flags.project, flags.context) },
      body: { email: args.email, role: flags.role as 'admin' | 'member' },
    });
    if ('member' in res) {
      this.print(`${res.member.email} already has an account: granted ${res.member.role} on the project`);
    } else {
      const inv = res.invitation;
      this.fields({ id: inv.id, email: inv.email, role: inv.role, state: inv.state, expires_at: inv.expires_at, token: inv.token, accept_url: conn.url + inv.accept_url });
      this.note(`the token is shown only once; the invitee accepts with \`platform invitations accept ${inv.token}\``);
    }
    return res;
  }
}
