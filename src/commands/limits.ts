import { BaseCommand } from '../cli/base-command.js';
import { projectRoutes } from '../api/projects.js';

export default class Limits extends BaseCommand {
  static override summary = 'Show the platform-wide limits: body caps, paging, names, quota defaults, instance sizes, timeouts';
  static override examples = ['<%= config.bin %> limits', '<%= config.bin %> limits --json'];

  async run() {
    const res = await (await this.client()).call(projectRoutes.limits);
    const rows = [
      ...Object.entries(res.bodies).map(([k, v]) => ({ group: 'bodies', name: k, value: String(v) })),
      { group: 'paging', name: 'page_size_default', value: String(res.paging.page_size_default) },
      { group: 'paging', name: 'page_size_max', value: String(res.paging.page_size_max) },
      ...res.quota_defaults.map((q) => ({ group: 'quota', name: q.resource, value: `${q.limit} ${q.unit}` })),
      ...res.instance_sizes.map((s) => ({ group: 'size', name: s.name, value: `${s.cpu} cpu, ${s.memory}${s.default ? ' (default)' : ''}` })),
      ...Object.entries(res.timeouts).map(([k, v]) => ({ group: 'timeouts', name: k, value: String(v) })),
      ...Object.entries(res.credentials).map(([k, v]) => ({ group: 'credentials', name: k, value: String(v) })),
      ...Object.entries(res.names).map(([k, v]) => ({ group: 'names', name: k, value: v })),
    ];
    this.table(rows, [
      { header: 'group', get: (r) => r.group },
      { header: 'name', get: (r) => r.name },
      { header: 'value', get: (r) => r.value },
    ]);
    return res;
  }
}
