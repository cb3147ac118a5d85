import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { agentRoutes } from '../../api/agents.js';

export default class AgentsGet extends BaseCommand {
  static override summary = 'Show one agent or function';
  static override examples = ['<%= config.bin %> agents get hello', '<%= config.bin %> agents get hello --json'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsGet);
    const a = await (await this.client()).call(agentRoutes.get, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.fields(a, ['name', 'state', 'ready', 'kind', 'framework', 'runtime', 'latest_revision', 'image', 'public_url', 'owner', 'created_at', 'updated_at', 'message']);
    return a;
  }
}
