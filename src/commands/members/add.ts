import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { memberRoutes } from '../../api/members.js';

export default class MembersAdd extends BaseCommand {
  static override summary = 'Grant a role on the project to an existing account';
  static override description = 'For someone without an account, send an invitation instead.';
  static override examples = ['<%= config.bin %> members add dev@example.com', '<%= config.bin %> members add lead@example.com --role admin --project shop-api --json'];
  static override args = { email: Args.string({ required: true, description: 'e-mail of an existing account' }) };
  static override flags = {
    project: projectFlag,
    role: Flags.string({ description: 'role on the project', options: ['member', 'admin'], default: 'member' }),
  };

  async run() {
    const { args, flags } = await this.parse(MembersAdd);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(memberRoutes.add, {
      params: { projectID },
      body: { email: args.email, role: flags.role as 'member' | 'admin' },
    });
    this.fields(res.member, ['email', 'role', 'kind', 'external', 'user_id']);
    this.note(res.note);
    return res;
  }
}
