import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { resolveOrgId } from '../../cli/flags.js';
import { updateContext } from '../../client/contexts.js';
import { projectRoutes } from '../../api/projects.js';

export default class ProjectsCreate extends BaseCommand {
  static override summary = 'Create a project (org admin of the target organization, or platform admin)';
  static override examples = [
    '<%= config.bin %> projects create shop-api --name "Shop API"',
    '<%= config.bin %> projects create shop-api --org acme --json',
    '<%= config.bin %> projects create shop-api --use',
  ];
  static override args = { slug: Args.string({ required: true, description: 'project slug (lowercase DNS label)' }) };
  static override flags = {
    name: Flags.string({ description: 'display name (default: the slug)' }),
    org: Flags.string({ description: 'organization slug or id (default: your home organization)' }),
    use: Flags.boolean({ description: 'make it the current project of the context' }),
  };

  async run() {
    const { args, flags } = await this.parse(ProjectsCreate);
    const conn = await this.connect();
    const org_id = flags.org ? await resolveOrgId(conn.client, flags.org) : undefined;
    const res = await conn.client.call(projectRoutes.create, { body: { slug: args.slug, name: flags.name, org_id } });
    this.fields(res.project, ['slug', 'name', 'short', 'id', 'org_id', 'your_role', 'your_metadata_role']);
    if (res.warning) this.note(`warning: ${res.warning}`);
    if (res.note) this.note(res.note);
    if (flags.use) {
      updateContext(conn.context.name, (c) => (c.project = res.project.slug));
      this.note(`current project of context ${conn.context.name}: ${res.project.slug}`);
    }
    return res;
  }
}
