import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { knowledgeRoutes, KnowledgeListResponse } from '../../api/knowledge.js';

export default class KnowledgeList extends BaseCommand {
  static override summary = "List the documents of an agent's knowledge base, oldest first";
  static override examples = ['<%= config.bin %> knowledge list hello'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = {
    project: projectFlag,
    'page-size': Flags.integer({ description: 'documents per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { args, flags } = await this.parse(KnowledgeList);
    const raw = await (await this.client()).call(knowledgeRoutes.listOrSearch, {
      params: { name: args.name },
      query: { ...projectQuery(flags.project, flags.context), page_size: flags['page-size']?.toString(), page_token: flags['page-token'] },
    });
    const res = KnowledgeListResponse.parse(raw);
    this.table(res.documents, [
      { header: 'id', get: (d) => d.id },
      { header: 'source', get: (d) => d.source },
      { header: 'chunks', get: (d) => String(d.chunks) },
      { header: 'chars', get: (d) => String(d.chars) },
      { header: 'embedded', get: (d) => (d.embedded ? 'yes' : 'no') },
      { header: 'added', get: (d) => d.created_at },
    ], 'no documents yet');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
