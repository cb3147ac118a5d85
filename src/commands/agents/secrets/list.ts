import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { agentRoutes } from '../../../api/agents.js';

export default class AgentsSecretsList extends BaseCommand {
  static override summary = "List the secrets set on one agent only (names, never values); the project's shared, versioned secrets: `platform secrets list`";
  static override examples = ['<%= config.bin %> agents secrets list hello'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsSecretsList);
    const res = await (await this.client()).call(agentRoutes.secretsGet, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.table(res.keys, [{ header: 'name', get: (k) => k }], 'no secrets');
    return res;
  }
}
