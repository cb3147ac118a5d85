import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { tokenFromLink } from '../../cli/project-flag.js';
import { invitationRoutes } from '../../api/invitations.js';

export default class InvitationsShow extends BaseCommand {
  static override summary = 'Show what an invitation grants (no sign-in needed)';
  static override examples = ['<%= config.bin %> invitations show inv_XXXX', '<%= config.bin %> invitations show https://platform.example.com/invite/inv_XXXX --json'];
  static override args = { token: Args.string({ required: true, description: 'invitation token or accept link' }) };

  async run() {
    const { args } = await this.parse(InvitationsShow);
    const conn = await this.connect({ anonymous: true });
    const res = await conn.client.call(invitationRoutes.preview, { params: { token: tokenFromLink(args.token) } });
    this.fields({ project: `${res.project_name} (${res.project_slug})`, email: res.email, role: res.role, expires_at: res.expires_at, account_exists: res.account_exists });
    return res;
  }
}
