import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { knowledgeRoutes } from '../../api/knowledge.js';

export default class KnowledgeDelete extends BaseCommand {
  static override summary = "Delete one document (and its chunks) from an agent's knowledge base";
  static override examples = ['<%= config.bin %> knowledge delete hello 3f1c…'];
  static override args = {
    name: Args.string({ description: 'agent name', required: true }),
    id: Args.string({ description: 'document id (from knowledge list)', required: true }),
  };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(KnowledgeDelete);
    await confirm(flags.yes, `delete a document from the knowledge base of ${args.name}`);
    const res = await (await this.client()).call(knowledgeRoutes.deleteOne, { params: { name: args.name, id: args.id }, query: projectQuery(flags.project, flags.context) });
    this.print(`deleted ${res.document.source} (${res.document.chunks} chunks)`);
    return res;
  }
}
