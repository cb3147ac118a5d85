import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { resolveOrgId } from '../../../cli/flags.js';
import { orgRoutes } from '../../../api/orgs.js';

export default class OrgsMembersUpdate extends BaseCommand {
  static override summary = "Change an organization member's role (platform admin)";
  static override examples = ['<%= config.bin %> orgs members update acme dev@example.com --role admin', '<%= config.bin %> orgs members update acme USER_ID --role member --json'];
  static override args = {
    org: Args.string({ required: true, description: 'organization slug or id' }),
    user: Args.string({ required: true, description: 'user id or e-mail' }),
  };
  static override flags = { role: Flags.string({ description: 'new role', options: ['member', 'admin'], required: true }) };

  async run() {
    const { args, flags } = await this.parse(OrgsMembersUpdate);
    const client = await this.client();
    const orgID = await resolveOrgId(client, args.org);
    const res = await client.call(orgRoutes.updateMember, { params: { orgID, userID: args.user }, body: { role: flags.role as 'member' | 'admin' } });
    this.fields(res.member, ['email', 'role', 'user_id']);
    this.note(res.note);
    return res;
  }
}
