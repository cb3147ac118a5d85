import { BaseCommand } from '../cli/base-command.js';
import { projectFlag } from '../cli/flags.js';
import { projectRoutes } from '../api/projects.js';

export default class Quota extends BaseCommand {
  static override summary = "Show a project's quota caps and live use per area (agents, serverless, MCP, cache): running instances, services, and the CPU and memory running instances reserve";
  static override examples = ['<%= config.bin %> quota', '<%= config.bin %> quota --project shop-api --json'];
  static override flags = { project: projectFlag };

  async run() {
    const { flags } = await this.parse(Quota);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(projectRoutes.quota, { params: { projectID } });
    this.table(res.quotas, [
      { header: 'resource', get: (q) => q.resource },
      { header: 'used', get: (q) => q.used },
      { header: 'limit', get: (q) => (q.limit === 0 ? 'unlimited' : q.limit) },
      { header: 'unit', get: (q) => q.unit },
      { header: 'source', get: (q) => (q.source === 'none' ? 'none' : Object.entries(q.by_source).map(([source, n]) => `${source} ${n}`).join(', ')) },
    ]);
    return res;
  }
}
