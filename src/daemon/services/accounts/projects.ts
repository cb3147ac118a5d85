import type { ProjectView } from '../../../api/projects.js';
import type { AreaContext } from '../../area.js';
import { principalKey, type Principal } from '../auth/principal.js';
import type { PageQuery } from '../../../api/common.js';
import { findProject, projectAccess, requireProjectAccess, type ProjectAccess, type ProjectNeed, type ProjectRow } from './access.js';
import { notFound } from '../../http/errors.js';

export function projectView(access: ProjectAccess): ProjectView {
  const p = access.project;
  return {
    id: p.id,
    org_id: p.org_id,
    slug: p.slug,
    name: p.name,
    short: p.short,
    created_at: p.created_at,
    ...(access.resource ? { your_role: access.resource } : {}),
    ...(access.metadata ? { your_metadata_role: access.metadata } : {}),
  };
}

/**
 * Resolves `{projectID}` (id, short or slug) and enforces the gate: unknown and invisible projects
 * are the same 404. Every project-scoped route of every area goes through here.
 */
export function accessProject(ctx: AreaContext, principal: Principal, ref: string, need: ProjectNeed): ProjectAccess {
  const gated = gateAnswers.get(principal);
  if (gated) {
    gateAnswers.delete(principal);
    if (gated.ref === ref) return requireProjectAccess(gated.access, need);
  }
  const project = findProject(ctx.db, ref);
  if (!project) throw notFound('project not found');
  return requireProjectAccess(projectAccess(ctx.db, ctx.clock, principal, project), need);
}

/**
 * The router's project gate (404 before validation) reads the caller's grants, then the route asks
 * again with its own need. The gate's answer is kept for that one next question of the same
 * request: keyed by the request's principal object (credentials are resolved into a fresh object
 * on every request) and consumed on first use, so grants are still read on every request, once.
 */
const gateAnswers = new WeakMap<Principal, { ref: string; access: ProjectAccess }>();

export function gateProject(ctx: AreaContext, principal: Principal, ref: string): void {
  const access = accessProject(ctx, principal, ref, 'visible');
  gateAnswers.set(principal, { ref, access });
}

/** Projects a person can see: all for a platform admin, else direct grants and org-admin inheritance. */
export function listProjects(ctx: AreaContext, principal: Principal, query: PageQuery) {
  // The list differs per caller, so the token is bound to the caller as well as the route.
  const page = ctx.pager.parse(query, `projects:${principalKey(principal)}`);
  const rows = ctx.db.prepare('SELECT * FROM acct_projects ORDER BY slug').all() as ProjectRow[];
  const visible = rows
    .map((p) => projectAccess(ctx.db, ctx.clock, principal, p))
    .filter((a) => a.resource || a.metadata)
    .map(projectView);
  const { items, next_page_token } = ctx.pager.slice(page, visible.slice(page.offset, page.offset + page.size + 1));
  return { projects: items, ...(next_page_token ? { next_page_token } : {}) };
}
