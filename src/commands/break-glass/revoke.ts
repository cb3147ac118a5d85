import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, confirm, yesFlag } from '../../cli/flags.js';
import { authRoutes } from '../../api/auth.js';
import { memberRoutes } from '../../api/members.js';

export default class BreakGlassRevoke extends BaseCommand {
  static override summary = 'End a break-glass grant early (yours by default); it stays listed as expired';
  static override examples = [
    '<%= config.bin %> break-glass revoke --project shop-api',
    '<%= config.bin %> break-glass revoke ops@example.com --project shop-api --json',
  ];
  static override args = { user: Args.string({ description: 'e-mail or id of the grant holder (default: you)' }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(BreakGlassRevoke);
    await confirm(flags.yes, `end the break-glass grant of ${args.user ?? 'you'}`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const userID = args.user ?? (await client.call(authRoutes.me)).email;
    const res = await client.call(memberRoutes.remove, { params: { projectID, userID } });
    this.note(res.note);
    return res;
  }
}
