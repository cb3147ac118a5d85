import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, searchRoutes, type SearchResult } from '../../../api/search.js';
import type { Area, AreaContext, SearchScope } from '../../area.js';
import { badRequest } from '../../http/errors.js';
import { stmt } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { projectAccess, type ProjectRow } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';

/**
 * Cross-resource search (spec 1 §4.11 GET /v1/search): resource names across the projects where
 * the caller holds a contents role, from what each area offers through hooks.searchables. A
 * project the caller cannot see is never asked, so its names cannot leak. Registered last.
 */
export const searchArea: Area = {
  name: 'search',
  register(r, ctx) {
    r.handle(searchRoutes.search, ({ principal, query }) => {
      const limit = query.limit === undefined ? SEARCH_LIMIT_DEFAULT : Number(query.limit);
      if (!(limit >= 1 && limit <= SEARCH_LIMIT_MAX)) throw badRequest(`limit must be between 1 and ${SEARCH_LIMIT_MAX}`);
      const projects = visibleProjects(ctx, principal!, query.project);
      const scope: SearchScope = { projects: projects.map((p) => ({ id: p.id, admin: p.admin })), email: principal!.email };
      const slugs = new Map(projects.map((p) => [p.id, p.slug]));
      const needle = query.q.toLowerCase();
      // Each area returns its best limit+1; ranking happens over their union.
      const found = ctx.hooks.searchables
        .flatMap((s) => s(scope, query.q, limit + 1))
        .filter((h) => slugs.has(h.projectId) && (!query.kind || h.kind === query.kind))
        .map((h): SearchResult => ({ kind: h.kind, name: h.name, project_id: h.projectId, project: slugs.get(h.projectId)!, match: matchOf(h.name.toLowerCase(), needle) }));
      found.sort((a, b) => RANK[a.match] - RANK[b.match] || a.name.length - b.name.length || a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind) || a.project.localeCompare(b.project));
      return { query: query.q, results: found.slice(0, limit), truncated: found.length > limit };
    });
  },
};

const RANK = { exact: 0, prefix: 1, substring: 2 } as const;
const matchOf = (name: string, needle: string): SearchResult['match'] => (name === needle ? 'exact' : name.startsWith(needle) ? 'prefix' : 'substring');

/** The projects searched: ?project= (404 unless the caller sees it), else every project where it holds a contents role. */
function visibleProjects(ctx: AreaContext, principal: Principal, ref: string | undefined): Array<{ id: string; slug: string; admin: boolean }> {
  if (ref) {
    const a = accessProject(ctx, principal, ref, 'member');
    return [{ id: a.project.id, slug: a.project.slug, admin: a.resource === 'admin' }];
  }
  const rows = stmt(ctx.db, 'SELECT * FROM acct_projects ORDER BY slug').all() as ProjectRow[];
  return rows.flatMap((p) => {
    const a = projectAccess(ctx.db, ctx.clock, principal, p);
    return a.resource ? [{ id: p.id, slug: p.slug, admin: a.resource === 'admin' }] : [];
  });
}
