import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { knowledgeRoutes } from '../../api/knowledge.js';

export default class KnowledgeEmpty extends BaseCommand {
  static override summary = "Empty an agent's knowledge base";
  static override examples = ['<%= config.bin %> knowledge empty hello'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(KnowledgeEmpty);
    await confirm(flags.yes, `delete every document from the knowledge base of ${args.name}`);
    const res = await (await this.client()).call(knowledgeRoutes.empty, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.print(`emptied the knowledge base of ${res.agent}: ${res.deleted_documents} documents, ${res.deleted_chunks} chunks`);
    return res;
  }
}
