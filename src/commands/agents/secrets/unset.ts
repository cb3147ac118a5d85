import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { UsageError } from '../../../client/errors.js';
import { agentRoutes } from '../../../api/agents.js';

export default class AgentsSecretsUnset extends BaseCommand {
  static override summary = 'Remove secrets (rolls a new revision)';
  static override examples = ['<%= config.bin %> agents secrets unset hello GREETING'];
  static override strict = false;
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, argv, flags } = await this.parse(AgentsSecretsUnset);
    const remove = (argv as string[]).slice(1);
    if (!remove.length) throw new UsageError('give at least one KEY to remove');
    const res = await (await this.client()).call(agentRoutes.secretsPatch, { params: { name: args.name }, query: projectQuery(flags.project, flags.context), body: { remove } });
    this.print(`removed ${remove.join(', ')} from ${args.name}`);
    return res;
  }
}
