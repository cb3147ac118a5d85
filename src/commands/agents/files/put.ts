import { Args } from '@oclif/core';
import { readFileSync } from 'node:fs';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { agentRoutes } from '../../../api/agents.js';

export default class AgentsFilesPut extends BaseCommand {
  static override summary = 'Write one stored source file from a local file (takes effect on redeploy)';
  static override aliases = ['files:put'];
  static override examples = ['<%= config.bin %> agents files put hello main.py ./main.py'];
  static override args = {
    name: Args.string({ description: 'agent or function name', required: true }),
    path: Args.string({ description: 'file path inside the source', required: true }),
    file: Args.file({ description: 'local file to upload (text)', required: true, exists: true }),
  };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsFilesPut);
    const content = readFileSync(args.file, 'utf8');
    const res = await (await this.client()).call(agentRoutes.filePut, { params: { name: args.name, path: args.path }, query: projectQuery(flags.project, flags.context), body: { content } });
    this.print(`wrote ${res.path} (${res.size} bytes); run \`${this.config.bin} agents redeploy ${args.name}\` to build it`);
    return res;
  }
}
