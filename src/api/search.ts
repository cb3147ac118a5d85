import { z } from 'zod';
import { route } from './contract.js';
import { Uuid } from './common.js';
import { lazySchema } from './lazy.js';

/** Kinds of resource the cross-resource search covers (spec 1 §4.11 GET /v1/search; body not shown). */
export const SEARCH_KINDS = ['agent', 'function', 'service', 'mcp_server', 'topic', 'index', 'cache', 'secret'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];
export const SEARCH_LIMIT_DEFAULT = 50;
export const SEARCH_LIMIT_MAX = 200;

export const SearchResult = lazySchema(() => z.object({
  kind: z.enum(SEARCH_KINDS),
  name: z.string(),
  project_id: Uuid,
  project: z.string().describe('project slug'),
  /** How the name matched: exact, prefix or substring (the order results come in). */
  match: z.enum(['exact', 'prefix', 'substring']),
}));
export type SearchResult = z.infer<typeof SearchResult>;

export const searchRoutes = {
  search: route({
    id: 'search',
    method: 'GET',
    path: '/v1/search',
    summary: 'Find resources by name across the projects the caller can see (secrets by name only)',
    auth: 'any',
    query: lazySchema(() => z.object({
      q: z.string().min(1).max(200),
      project: z.string().optional(),
      kind: z.enum(SEARCH_KINDS).optional(),
      limit: z.string().regex(/^\d+$/, 'must be a whole number').optional(),
    })),
    status: 200,
    response: lazySchema(() => z.object({
      query: z.string(),
      results: z.array(SearchResult),
      /** True when more resources matched than limit: narrow with project, kind or a longer q. */
      truncated: z.boolean(),
    })),
  }),
};
