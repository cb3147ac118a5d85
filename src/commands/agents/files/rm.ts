import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { agentRoutes } from '../../../api/agents.js';
import { confirm, yesFlag } from '../../../cli/flags.js';

export default class AgentsFilesRm extends BaseCommand {
  static override summary = 'Remove one stored source file';
  static override aliases = ['files:rm'];
  static override examples = ['<%= config.bin %> agents files rm hello old.py'];
  static override args = {
    name: Args.string({ description: 'agent or function name', required: true }),
    path: Args.string({ description: 'file path inside the source', required: true }),
  };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsFilesRm);
    await confirm(flags.yes, `remove ${args.path} from the stored source of ${args.name}`);
    const res = await (await this.client()).call(agentRoutes.fileDelete, { params: { name: args.name, path: args.path }, query: projectQuery(flags.project, flags.context) });
    this.print(`removed ${res.path}`);
    return res;
  }
}
