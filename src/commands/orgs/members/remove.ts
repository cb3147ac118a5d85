import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { confirm, resolveOrgId, yesFlag } from '../../../cli/flags.js';
import { orgRoutes } from '../../../api/orgs.js';

export default class OrgsMembersRemove extends BaseCommand {
  static override summary = 'Remove a member from an organization (platform admin)';
  static override examples = ['<%= config.bin %> orgs members remove acme dev@example.com --yes', '<%= config.bin %> orgs members remove acme USER_ID --yes --json'];
  static override args = {
    org: Args.string({ required: true, description: 'organization slug or id' }),
    user: Args.string({ required: true, description: 'user id or e-mail' }),
  };
  static override flags = { yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(OrgsMembersRemove);
    const client = await this.client();
    const orgID = await resolveOrgId(client, args.org);
    await confirm(flags.yes, `remove ${args.user} from ${args.org}`);
    const res = await client.call(orgRoutes.removeMember, { params: { orgID, userID: args.user } });
    this.print(`removed ${args.user} from ${args.org}`);
    this.note(res.note);
    return res;
  }
}
