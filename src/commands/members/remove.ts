import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../cli/flags.js';
import { memberRoutes } from '../../api/members.js';

export default class MembersRemove extends BaseCommand {
  static override summary = "Remove a member's grant (ends a break-glass grant early)";
  static override examples = [
    '<%= config.bin %> members remove dev@example.com --yes',
    '<%= config.bin %> members remove deployer --service-account --yes --json',
  ];
  static override args = { member: Args.string({ required: true, description: 'user id or e-mail; with --service-account, its id or name' }) };
  static override flags = {
    project: projectFlag,
    'service-account': Flags.boolean({ description: 'the member is a service account (the account and its keys live on)' }),
    yes: yesFlag,
  };

  async run() {
    const { args, flags } = await this.parse(MembersRemove);
    const projectID = this.projectRef(flags.project, flags.context);
    await confirm(flags.yes, `remove ${args.member} from project ${projectID}`);
    const client = await this.client();
    const res = flags['service-account']
      ? await client.call(memberRoutes.removeServiceAccount, { params: { projectID, saID: args.member } })
      : await client.call(memberRoutes.remove, { params: { projectID, userID: args.member } });
    this.print(`removed ${args.member} from ${projectID}`);
    this.note(res.note);
    return res;
  }
}
