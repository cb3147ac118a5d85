import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { parseKeyValues } from '../../../cli/key-values.js';
import { agentRoutes } from '../../../api/agents.js';

export default class AgentsEnvSet extends BaseCommand {
  static override summary = 'Set environment variables (rolls a new revision)';
  static override aliases = ['env:set'];
  static override examples = ['<%= config.bin %> agents env set hello GREETING=hi OTHER=1'];
  static override strict = false;
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, argv, flags } = await this.parse(AgentsEnvSet);
    const set = parseKeyValues((argv as string[]).slice(1));
    const res = await (await this.client()).call(agentRoutes.envPatch, { params: { name: args.name }, query: projectQuery(flags.project, flags.context), body: { set } });
    this.print(`updated ${Object.keys(set).join(', ')} on ${args.name}`);
    return res;
  }
}
