import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { agentRoutes } from '../../api/agents.js';

export default class AgentsList extends BaseCommand {
  static override summary = 'List agents and functions (yours; all of them for project admins)';
  static override examples = ['<%= config.bin %> agents list', '<%= config.bin %> agents list --project demo --json'];
  static override flags = {
    project: projectFlag,
    'page-size': Flags.integer({ description: 'agents per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { flags } = await this.parse(AgentsList);
    const res = await (await this.client()).call(agentRoutes.list, {
      query: { ...projectQuery(flags.project, flags.context), page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(res.agents, [
      { header: 'name', get: (a) => a.name },
      { header: 'state', get: (a) => a.state },
      { header: 'framework', get: (a) => a.framework },
      { header: 'revision', get: (a) => a.latest_revision },
      { header: 'owner', get: (a) => a.owner },
      { header: 'url', get: (a) => a.public_url },
    ], 'no agents yet: deploy one with `platform deploy`');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
