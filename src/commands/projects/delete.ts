import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { getContext, updateContext } from '../../client/contexts.js';
import { projectRoutes } from '../../api/projects.js';

export default class ProjectsDelete extends BaseCommand {
  static override summary = 'Delete a project that holds no agents (the default project cannot be deleted)';
  static override examples = ['<%= config.bin %> projects delete shop-api --yes', '<%= config.bin %> projects delete shop-api --yes --json'];
  static override args = { project: Args.string({ required: true, description: 'project slug, short or id' }) };
  static override flags = { yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(ProjectsDelete);
    await confirm(flags.yes, `delete the project ${args.project}`);
    const conn = await this.connect();
    const res = await conn.client.call(projectRoutes.delete, { params: { projectID: args.project } });
    const ctx = getContext(conn.context.name);
    if (ctx.project && [res.project.slug, res.project.id, res.project.short].includes(ctx.project)) {
      updateContext(ctx.name, (c) => delete c.project);
      this.note(`context ${ctx.name} no longer has a current project`);
    }
    this.print(`deleted project ${res.project.slug}`);
    return res;
  }
}
