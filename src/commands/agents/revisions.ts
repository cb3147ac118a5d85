import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { agentRoutes } from '../../api/agents.js';

export default class AgentsRevisions extends BaseCommand {
  static override summary = 'List the immutable revisions of an agent, newest first';
  static override examples = ['<%= config.bin %> agents revisions hello'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    'page-size': Flags.integer({ description: 'revisions per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { args, flags } = await this.parse(AgentsRevisions);
    const res = await (await this.client()).call(agentRoutes.revisions, {
      params: { name: args.name },
      query: { ...projectQuery(flags.project, flags.context), page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(res.revisions, [
      { header: 'revision', get: (r) => `${r.name}${r.serving ? ' *' : ''}` },
      { header: 'state', get: (r) => r.state },
      { header: 'reason', get: (r) => r.reason },
      { header: 'env', get: (r) => r.env_keys },
      { header: 'secrets', get: (r) => r.secret_keys },
      { header: 'created', get: (r) => r.created_at },
      { header: 'traffic', get: (r) => (r.traffic_percent ? `${r.traffic_percent}%` : '') },
    ], 'no revisions yet');
    if (res.revisions.some((r) => r.serving)) this.note('* serves requests (split them with `platform agents traffic`)');
    for (const r of res.revisions.filter((x) => x.state === 'failed')) this.note(`${r.name}: ${(r.message ?? '').split('\n')[0]}`);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
