import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { memberRoutes } from '../../api/members.js';

export default class BreakGlassGrant extends BaseCommand {
  static override summary = 'Grant yourself time-limited access to a project\'s contents (platform admin)';
  static override description =
    'The reason is shown verbatim to the project\'s members and recorded in the audit log. The grant ends on its own after --minutes (default 240, at most 1440).';
  static override examples = [
    '<%= config.bin %> break-glass grant --project shop-api --reason "INC-1234: checkout agents down"',
    '<%= config.bin %> break-glass grant --project shop-api --reason "INC-1234: read logs" --role member --minutes 30 --json',
  ];
  static override flags = {
    project: projectFlag,
    reason: Flags.string({ description: 'why (at least 12 characters; shown to the project members)', required: true }),
    role: Flags.string({ description: 'role on the contents', options: ['admin', 'member'], default: 'admin' }),
    minutes: Flags.integer({ description: 'duration in minutes (1-1440)', default: 240 }),
  };

  async run() {
    const { flags } = await this.parse(BreakGlassGrant);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(memberRoutes.breakGlass, {
      params: { projectID },
      body: { reason: flags.reason, role: flags.role as 'admin' | 'member', minutes: flags.minutes },
    });
    this.fields(res.grant, ['email', 'role', 'expires_at', 'reason', 'granted_by']);
    this.note(res.note);
    return res;
  }
}
