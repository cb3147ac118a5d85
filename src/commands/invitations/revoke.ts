import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectOrDefault } from '../../cli/project-flag.js';
import { invitationRoutes } from '../../api/invitations.js';

export default class InvitationsRevoke extends BaseCommand {
  static override summary = 'Revoke an open invitation';
  static override examples = ['<%= config.bin %> invitations revoke 3f0c5a1e-...', '<%= config.bin %> invitations revoke ID --project web --json'];
  static override args = { id: Args.string({ required: true, description: 'invitation id (see `platform invitations list`)' }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(InvitationsRevoke);
    await confirm(flags.yes, `revoke invitation ${args.id}`);
    const res = await (await this.client()).call(invitationRoutes.revoke, {
      params: { projectID: projectOrDefault(flags.project, flags.context), invitationID: args.id },
    });
    this.print(`revoked the invitation of ${res.invitation.email}: ${res.note}`);
    return res;
  }
}
