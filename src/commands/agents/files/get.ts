import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { agentRoutes } from '../../../api/agents.js';

export default class AgentsFilesGet extends BaseCommand {
  static override summary = 'Print one stored source file';
  static override aliases = ['files:get'];
  static override examples = ['<%= config.bin %> agents files get hello main.py > main.py'];
  static override args = {
    name: Args.string({ description: 'agent or function name', required: true }),
    path: Args.string({ description: 'file path inside the source', required: true }),
  };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsFilesGet);
    const res = await (await this.client()).call(agentRoutes.fileGet, { params: { name: args.name, path: args.path }, query: projectQuery(flags.project, flags.context) });
    if (!this.jsonEnabled()) process.stdout.write(res.content);
    return res;
  }
}
