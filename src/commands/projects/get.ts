import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { projectRoutes } from '../../api/projects.js';

export default class ProjectsGet extends BaseCommand {
  static override summary = 'Show one project (default: the current project)';
  static override examples = ['<%= config.bin %> projects get shop-api', '<%= config.bin %> projects get --json', '<%= config.bin %> projects get --project a1b2c3'];
  static override args = { project: Args.string({ description: 'project slug, short or id' }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(ProjectsGet);
    const ref = this.projectRef(args.project ?? flags.project, flags.context);
    const p = await (await this.client()).call(projectRoutes.get, { params: { projectID: ref } });
    this.fields(p, ['slug', 'name', 'short', 'id', 'org_id', 'created_at', 'your_role', 'your_metadata_role']);
    return p;
  }
}
