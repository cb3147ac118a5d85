import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { agentRoutes } from '../../../api/agents.js';

export default class AgentsEnvGet extends BaseCommand {
  static override summary = 'Show the environment variables of an agent';
  static override aliases = ['agents:env:list', 'env:list', 'env:get'];
  static override examples = ['<%= config.bin %> agents env get hello'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsEnvGet);
    const res = await (await this.client()).call(agentRoutes.envGet, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.table(Object.entries(res.env), [
      { header: 'name', get: ([k]) => k },
      { header: 'value', get: ([, v]) => v },
    ], 'no environment variables');
    return res;
  }
}
