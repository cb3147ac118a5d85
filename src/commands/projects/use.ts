import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { updateContext } from '../../client/contexts.js';
import { projectRoutes } from '../../api/projects.js';

export default class ProjectsUse extends BaseCommand {
  static override summary = 'Set the current project of the context';
  static override description = 'Project-scoped commands use it when --project and PLATFORM_PROJECT are not given.';
  static override examples = ['<%= config.bin %> projects use shop-api', '<%= config.bin %> projects use default --json'];
  static override args = { project: Args.string({ required: true, description: 'project slug, short or id' }) };

  async run() {
    const { args } = await this.parse(ProjectsUse);
    const conn = await this.connect();
    // Checked first so a typo never becomes the current project.
    const p = await conn.client.call(projectRoutes.get, { params: { projectID: args.project } });
    updateContext(conn.context.name, (c) => (c.project = p.slug));
    this.print(`current project of context ${conn.context.name}: ${p.slug} (${p.short})`);
    return { context: conn.context.name, project: p };
  }
}
