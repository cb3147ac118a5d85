import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { SEARCH_KINDS, SEARCH_LIMIT_MAX, searchRoutes } from '../api/search.js';

export default class Search extends BaseCommand {
  static override summary = 'Find resources by name across the projects you can see (agents, functions, services, MCP servers, topics, indexes, caches, secrets)';
  static override examples = ['<%= config.bin %> search orders', '<%= config.bin %> search orders --kind secret --json'];
  static override args = { query: Args.string({ description: 'part of a name (case-insensitive)', required: true }) };
  static override flags = {
    // No PLATFORM_PROJECT fallback: search spans every project unless asked to narrow it.
    project: Flags.string({ char: 'p', description: 'search one project only (slug, short or id)' }),
    kind: Flags.string({ description: 'one kind of resource', options: [...SEARCH_KINDS] }),
    limit: Flags.integer({ description: `results to return (1-${SEARCH_LIMIT_MAX})`, min: 1, max: SEARCH_LIMIT_MAX }),
  };

  async run() {
    const { args, flags } = await this.parse(Search);
    const res = await (await this.client()).call(searchRoutes.search, {
      query: { q: args.query, project: flags.project, kind: flags.kind as (typeof SEARCH_KINDS)[number] | undefined, limit: flags.limit?.toString() },
    });
    this.table(res.results, [
      { header: 'kind', get: (r) => r.kind },
      { header: 'name', get: (r) => r.name },
      { header: 'project', get: (r) => r.project },
    ], 'nothing matches');
    if (res.truncated) this.note('more matched: narrow with --project, --kind or a longer query');
    return res;
  }
}
