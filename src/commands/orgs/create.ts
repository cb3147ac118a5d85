import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { orgRoutes } from '../../api/orgs.js';

export default class OrgsCreate extends BaseCommand {
  static override summary = 'Create an organization (platform admin)';
  static override examples = ['<%= config.bin %> orgs create acme --name "Acme Inc."', '<%= config.bin %> orgs create acme --json'];
  static override args = { slug: Args.string({ required: true, description: 'organization slug (lowercase DNS label)' }) };
  static override flags = { name: Flags.string({ description: 'display name (default: the slug)' }) };

  async run() {
    const { args, flags } = await this.parse(OrgsCreate);
    const org = await (await this.client()).call(orgRoutes.create, { body: { slug: args.slug, name: flags.name } });
    this.fields(org, ['slug', 'name', 'id', 'created_at']);
    return org;
  }
}
