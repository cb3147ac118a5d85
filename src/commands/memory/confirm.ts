import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryConfirm extends BaseCommand {
  static override summary = 'Mark a generated memory as confirmed';
  static override examples = ['<%= config.bin %> memory confirm assistant mem_0123'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), id: Args.string({ description: 'memory id', required: true }) };
  static override flags = {
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(MemoryConfirm);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.confirm(args.id);
    this.print(`confirmed ${res.memory.id}: ${res.memory.fact}`);
    return res;
  }
}
