import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { agentRoutes } from '../../../api/agents.js';
import { forPeople } from '../../../client/api-hints.js';

export default class AgentsFilesList extends BaseCommand {
  static override summary = 'List the stored source files of an agent';
  static override aliases = ['files:list'];
  static override examples = ['<%= config.bin %> agents files list hello'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(AgentsFilesList);
    const res = await (await this.client()).call(agentRoutes.filesList, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.table(res.files, [
      { header: 'path', get: (f) => f.path },
      { header: 'size', get: (f) => f.size },
      { header: 'updated', get: (f) => f.updated_at },
    ], 'no stored files');
    this.note(forPeople(res.note));
    return res;
  }
}
