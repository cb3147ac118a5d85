import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { UsageError } from '../../../client/errors.js';
import { agentRoutes } from '../../../api/agents.js';

export default class AgentsEnvUnset extends BaseCommand {
  static override summary = 'Remove environment variables (rolls a new revision)';
  static override aliases = ['env:unset'];
  static override examples = ['<%= config.bin %> agents env unset hello GREETING'];
  static override strict = false;
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, argv, flags } = await this.parse(AgentsEnvUnset);
    const remove = (argv as string[]).slice(1);
    if (!remove.length) throw new UsageError('give at least one KEY to remove');
    const res = await (await this.client()).call(agentRoutes.envPatch, { params: { name: args.name }, query: projectQuery(flags.project, flags.context), body: { remove } });
    this.print(`removed ${remove.join(', ')} from ${args.name}`);
    return res;
  }
}
