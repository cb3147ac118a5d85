import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { knowledgeRoutes } from '../../api/knowledge.js';

export default class KnowledgeEmpty extends BaseCommand {
  static override summary = "Empty an agent's knowledge base";
  static override examples = ['<%= config.bin %> knowledge empty hello'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(KnowledgeEmpty);
    const res = await (await this.client()).call(knowledgeRoutes.empty, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.print(`emptied the knowledge base of ${res.agent}: ${res.deleted_documents} documents, ${res.deleted_chunks} chunks`);
    return res;
  }
}
