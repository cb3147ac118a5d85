import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryStatus extends BaseCommand {
  static override summary = 'Memory counts, last reindex and memorize';
  static override examples = ['<%= config.bin %> memory status assistant'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(MemoryStatus);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.status();
    this.fields({ ...res.policy, ...res.entries, extractor: res.extractor, last_memorize_at: res.last_memorize_at, last_reindex_at: res.last_reindex_at });
    return res;
  }
}
