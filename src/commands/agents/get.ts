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
    // The served split on one line (`hello-00001 90%, hello-00002 10%`); the whole of it: `agents traffic`.
    const traffic = a.active_traffic.map((t) => `${t.revision_name} ${t.percent}%`).join(', ') || undefined;
    this.fields({ ...a, traffic }, ['name', 'state', 'ready', 'kind', 'framework', 'runtime', 'latest_revision', 'traffic', 'image', 'public_url', 'owner', 'created_at', 'updated_at', 'message']);
    return a;
  }
}
