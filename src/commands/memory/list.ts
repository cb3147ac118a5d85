import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryList extends BaseCommand {
  static override summary = 'List memories, newest first or ranked by --query';
  static override examples = ['<%= config.bin %> memory list assistant --user u-42', '<%= config.bin %> memory list assistant --query tea --all'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    user: Flags.string({ description: 'one end user' }),
    query: Flags.string({ description: 'rank by relevance to this text' }),
    all: Flags.boolean({ description: 'include invalidated memories' }),
    'page-size': Flags.integer({ description: 'memories per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { args, flags } = await this.parse(MemoryList);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.list({ user: flags.user, query: flags.query, all: flags.all, pageSize: flags['page-size'], pageToken: flags['page-token'] });
    this.table(res.memories, [
      { header: 'id', get: (m) => m.id },
      { header: 'fact', get: (m) => m.fact },
      { header: 'user', get: (m) => m.user_id ?? '(agent)' },
      { header: 'source', get: (m) => m.source },
      { header: 'confirmed', get: (m) => String(m.confirmed) },
      { header: 'served', get: (m) => String(!m.invalidated) },
    ], 'no memories');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
