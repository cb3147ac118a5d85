import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { resolveOrgId } from '../../../cli/flags.js';
import { orgRoutes } from '../../../api/orgs.js';

export default class OrgsMembersAdd extends BaseCommand {
  static override summary = 'Add an existing account to an organization (platform admin)';
  static override description = 'Org admins inherit admin on every project of the organization.';
  static override examples = ['<%= config.bin %> orgs members add acme dev@example.com', '<%= config.bin %> orgs members add acme lead@example.com --role admin --json'];
  static override args = {
    org: Args.string({ required: true, description: 'organization slug or id' }),
    email: Args.string({ required: true, description: 'e-mail of an existing account' }),
  };
  static override flags = { role: Flags.string({ description: 'role in the organization', options: ['member', 'admin'], default: 'member' }) };

  async run() {
    const { args, flags } = await this.parse(OrgsMembersAdd);
    const client = await this.client();
    const orgID = await resolveOrgId(client, args.org);
    const res = await client.call(orgRoutes.addMember, { params: { orgID }, body: { email: args.email, role: flags.role as 'member' | 'admin' } });
    this.fields(res.member, ['email', 'role', 'user_id']);
    if (res.note) this.note(res.note);
    return res;
  }
}
