import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryAdd extends BaseCommand {
  static override summary = 'Add a memory by hand (confirmed)';
  static override examples = ['<%= config.bin %> memory add assistant "Prefers metric units" --user u-42'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), fact: Args.string({ description: 'the fact to remember', required: true }) };
  static override flags = {
    project: projectFlag,
    user: Flags.string({ description: 'the end user it is about (omit: agent-wide)' }),
  };

  async run() {
    const { args, flags } = await this.parse(MemoryAdd);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.add(args.fact, flags.user);
    this.print(`added ${res.memory.id}`);
    return res;
  }
}
