import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectRoutes } from '../../api/projects.js';

export default class ProjectsList extends BaseCommand {
  static override summary = 'List the projects you can see';
  static override examples = ['<%= config.bin %> projects list', '<%= config.bin %> projects list --json', '<%= config.bin %> projects list --page-size 10 --page-token TOKEN'];
  static override flags = {
    'page-size': Flags.integer({ description: 'projects per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { flags } = await this.parse(ProjectsList);
    const res = await (await this.client()).call(projectRoutes.list, {
      query: { page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(res.projects, [
      { header: 'slug', get: (p) => p.slug },
      { header: 'name', get: (p) => p.name },
      { header: 'short', get: (p) => p.short },
      { header: 'role', get: (p) => p.your_role },
      { header: 'metadata role', get: (p) => p.your_metadata_role },
      { header: 'id', get: (p) => p.id },
    ], 'no projects');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
