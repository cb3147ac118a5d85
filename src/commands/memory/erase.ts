import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryErase extends BaseCommand {
  static override summary = 'Erase every memory of one end user';
  static override examples = ['<%= config.bin %> memory erase assistant --user u-42'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    user: Flags.string({ description: 'the end user whose memories go', required: true }),
    yes: yesFlag,
  };

  async run() {
    const { args, flags } = await this.parse(MemoryErase);
    await confirm(flags.yes, `erase every memory of ${flags.user} in ${args.agent}`);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.erase(flags.user);
    this.print(`erased ${res.erased} memor${res.erased === 1 ? 'y' : 'ies'} of ${res.user_id}`);
    return res;
  }
}
