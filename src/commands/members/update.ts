import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { memberRoutes } from '../../api/members.js';

export default class MembersUpdate extends BaseCommand {
  static override summary = "Change a member's role on the project";
  static override examples = [
    '<%= config.bin %> members update dev@example.com --role admin',
    '<%= config.bin %> members update deployer --service-account --role member --json',
  ];
  static override args = { member: Args.string({ required: true, description: 'user id or e-mail; with --service-account, its id or name' }) };
  static override flags = {
    project: projectFlag,
    role: Flags.string({ description: 'new role', options: ['member', 'admin'], required: true }),
    'service-account': Flags.boolean({ description: 'the member is a service account' }),
  };

  async run() {
    const { args, flags } = await this.parse(MembersUpdate);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const role = flags.role as 'member' | 'admin';
    const res = flags['service-account']
      ? await client.call(memberRoutes.updateServiceAccount, { params: { projectID, saID: args.member }, body: { role } })
      : await client.call(memberRoutes.update, { params: { projectID, userID: args.member }, body: { role } });
    this.print(`${args.member} now has role ${res.role}`);
    return res;
  }
}
