import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, resolveOrgId, yesFlag } from '../../cli/flags.js';
import { orgRoutes } from '../../api/orgs.js';

export default class OrgsDelete extends BaseCommand {
  static override summary = 'Delete an organization that has no projects and no users (platform admin)';
  static override examples = ['<%= config.bin %> orgs delete acme --yes', '<%= config.bin %> orgs delete 0b0c6c2e-5d4f-4a8e-9a71-3b1f2f6f9e10 --yes --json'];
  static override args = { org: Args.string({ required: true, description: 'organization slug or id' }) };
  static override flags = { yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(OrgsDelete);
    const client = await this.client();
    const orgID = await resolveOrgId(client, args.org);
    await confirm(flags.yes, `delete the organization ${args.org}`);
    const res = await client.call(orgRoutes.delete, { params: { orgID } });
    this.print(`deleted organization ${res.org.slug}`);
    return res;
  }
}
