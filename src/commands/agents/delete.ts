import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { agentRoutes } from '../../api/agents.js';

export default class AgentsDelete extends BaseCommand {
  static override summary = 'Delete an agent or function and stop its instances';
  static override examples = ['<%= config.bin %> agents delete hello'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsDelete);
    await confirm(flags.yes, `delete ${args.name} with its revisions, files and secrets, and stop its instances`);
    const res = await (await this.client()).call(agentRoutes.delete, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.print(`deleted ${res.agent.name}`);
    return res;
  }
}
