import { Args, Flags } from '@oclif/core';
import { readFileSync } from 'node:fs';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { knowledgeRoutes } from '../../api/knowledge.js';

export default class KnowledgeAdd extends BaseCommand {
  static override summary = "Add text files to an agent's knowledge base (chunked and indexed for search)";
  static override examples = ['<%= config.bin %> knowledge add hello docs/faq.md docs/pricing.md'];
  static override strict = false;
  static override args = {
    name: Args.string({ description: 'agent name', required: true }),
    file: Args.file({ description: 'text file to add (more may follow)', required: true, exists: true }),
  };
  static override flags = {
    project: projectFlag,
    source: Flags.string({ description: 'source name recorded for a single file (default: the path as given)' }),
  };

  async run() {
    const { args, argv, flags } = await this.parse(KnowledgeAdd);
    const files = (argv as string[]).slice(1);
    if (flags.source && files.length > 1) this.error('--source names one file; give one file or drop --source', { exit: 2 });
    const documents = files.map((f) => ({ source: flags.source ?? f, text: readFileSync(f, 'utf8') }));
    const res = await (await this.client()).call(knowledgeRoutes.add, { params: { name: args.name }, query: projectQuery(flags.project, flags.context), body: { documents } });
    for (const d of res.documents) this.print(`added ${d.source}: ${d.chunks} chunk${d.chunks === 1 ? '' : 's'}${d.embedded ? ', embedded' : ''} (${d.id})`);
    return res;
  }
}
