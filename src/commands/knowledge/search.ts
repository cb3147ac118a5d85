import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { KNOWLEDGE_LIMITS, knowledgeRoutes, KnowledgeSearchResponse } from '../../api/knowledge.js';

export default class KnowledgeSearch extends BaseCommand {
  static override summary = "Search an agent's knowledge base: the best chunks with their scores and sources";
  static override examples = ['<%= config.bin %> knowledge search hello "refund policy" --top-k 3'];
  static override args = {
    name: Args.string({ description: 'agent name', required: true }),
    query: Args.string({ description: 'what to look for', required: true }),
  };
  static override flags = {
    project: projectFlag,
    'top-k': Flags.integer({ description: `chunks to return (1-${KNOWLEDGE_LIMITS.topKMax})`, min: 1, max: KNOWLEDGE_LIMITS.topKMax }),
  };

  async run() {
    const { args, flags } = await this.parse(KnowledgeSearch);
    const raw = await (await this.client()).call(knowledgeRoutes.listOrSearch, {
      params: { name: args.name },
      query: { ...projectQuery(flags.project, flags.context), query: args.query, top_k: flags['top-k'] === undefined ? undefined : String(flags['top-k']) },
    });
    const res = KnowledgeSearchResponse.parse(raw);
    this.table(res.results, [
      { header: 'score', get: (h) => h.score.toFixed(4) },
      { header: 'source', get: (h) => `${h.source}#${h.chunk}` },
      { header: 'text', get: (h) => oneLine(h.text, 80) },
    ], 'no matching chunks');
    this.note(`mode: ${res.mode}`);
    if (res.note) this.note(res.note);
    return res;
  }
}

const oneLine = (s: string, max: number) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};
