import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { UsageError } from '../../client/errors.js';
import { getContext, updateContext } from '../../client/contexts.js';
import { projectRoutes } from '../../api/projects.js';

export default class ProjectsRename extends BaseCommand {
  static override summary = "Change a project's slug and/or display name; its short id never changes";
  static override examples = [
    '<%= config.bin %> projects rename shop-api --slug storefront-api',
    '<%= config.bin %> projects rename --project shop-api --name "Storefront API" --json',
  ];
  static override args = { project: Args.string({ description: 'project slug, short or id (default: the current project)' }) };
  static override flags = {
    project: projectFlag,
    slug: Flags.string({ description: 'new slug' }),
    name: Flags.string({ description: 'new display name' }),
  };

  async run() {
    const { args, flags } = await this.parse(ProjectsRename);
    if (flags.slug === undefined && flags.name === undefined) throw new UsageError('nothing to rename', 'pass --slug and/or --name');
    const ref = this.projectRef(args.project ?? flags.project, flags.context);
    const conn = await this.connect();
    const res = await conn.client.call(projectRoutes.update, { params: { projectID: ref }, body: { slug: flags.slug, name: flags.name } });
    // Keep the context pointing at the project when its current slug was renamed.
    const ctx = getContext(conn.context.name);
    if (flags.slug && ctx.project === ref && ref !== res.project.slug) updateContext(ctx.name, (c) => (c.project = res.project.slug));
    this.fields(res.project, ['slug', 'name', 'short', 'id']);
    this.note(res.note);
    return res;
  }
}
