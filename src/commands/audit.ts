import { BaseCommand } from '../cli/base-command.js';
import { pageFlags, projectFlag, projectOrDefault } from '../cli/project-flag.js';
import { auditRoutes } from '../api/audit.js';

export default class Audit extends BaseCommand {
  static override summary = "Show a project's audit log, newest first";
  static override examples = ['<%= config.bin %> audit', '<%= config.bin %> audit --project web --page-size 20', '<%= config.bin %> audit --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(Audit);
    const res = await (await this.client()).call(auditRoutes.list, {
      params: { projectID: projectOrDefault(flags.project, flags.context) },
      query: { page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(
      res.entries,
      [
        { header: 'time', get: (e) => e.ts },
        { header: 'actor', get: (e) => e.actor },
        { header: 'action', get: (e) => e.action },
        { header: 'target', get: (e) => e.target },
        { header: 'details', get: (e) => (Object.keys(e.details).length ? JSON.stringify(e.details) : '') },
      ],
      'no audit entries',
    );
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
