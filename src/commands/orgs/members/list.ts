import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { pageFlags, pageQuery, resolveOrgId } from '../../../cli/flags.js';
import { orgRoutes } from '../../../api/orgs.js';

export default class OrgsMembersList extends BaseCommand {
  static override summary = 'List the members of an organization (platform admin)';
  static override examples = ['<%= config.bin %> orgs members list acme', '<%= config.bin %> orgs members list default --json'];
  static override args = { org: Args.string({ required: true, description: 'organization slug or id' }) };
  static override flags = { ...pageFlags };

  async run() {
    const { args, flags } = await this.parse(OrgsMembersList);
    const client = await this.client();
    const orgID = await resolveOrgId(client, args.org);
    const res = await client.call(orgRoutes.listMembers, { params: { orgID }, query: pageQuery(flags) });
    this.table(res.members, [
      { header: 'email', get: (m) => m.email },
      { header: 'role', get: (m) => m.role },
      { header: 'user id', get: (m) => m.user_id },
    ], 'no members');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
