import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryDelete extends BaseCommand {
  static override summary = 'Delete one memory';
  static override examples = ['<%= config.bin %> memory delete assistant mem_0123'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), id: Args.string({ description: 'memory id', required: true }) };
  static override flags = {
    project: projectFlag,
    yes: yesFlag,
  };

  async run() {
    const { args, flags } = await this.parse(MemoryDelete);
    await confirm(flags.yes, `delete memory ${args.id} of ${args.agent}`);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.delete(args.id);
    this.print(`deleted ${res.memory.id}: ${res.memory.fact}`);
    return res;
  }
}
