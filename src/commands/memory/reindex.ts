import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryReindex extends BaseCommand {
  static override summary = 'Recompute memory search terms and drop expired entries';
  static override examples = ['<%= config.bin %> memory reindex assistant'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(MemoryReindex);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.reindex();
    this.print(`reindexed ${res.entries.total} memories at ${res.last_reindex_at}`);
    return res;
  }
}
