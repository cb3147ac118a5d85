import type { AreaContext } from '../../area.js';
import { conflict, forbidden, notFound } from '../../http/errors.js';
import type { Principal } from '../auth/principal.js';
import { findProject, projectAccess, type ProjectAccess, type ProjectRow } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import { stmt } from '../../store/db.js';
import { agentStore, type AgentRow } from './store.js';

export const unknownAgent = (name: string) => notFound(`unknown agent ${name}`);

/**
 * The project of a per-agent request (spec 1 §4.1): ?project= when given, else the caller's
 * first project: a project-scoped credential's own project, or for a person the default
 * project when they hold a role on it, else the first by slug. Needs a contents role.
 */
export function resolveProject(ctx: AreaContext, principal: Principal, ref: string | undefined): ProjectAccess {
  if (ref) return accessProject(ctx, principal, ref, 'member');
  if (principal.kind !== 'user') return accessProject(ctx, principal, principal.projectId, 'member');
  const rows = stmt(ctx.db, 'SELECT * FROM acct_projects ORDER BY is_default DESC, slug').all() as ProjectRow[];
  for (const p of rows) {
    const a = projectAccess(ctx.db, ctx.clock, principal, p);
    if (a.resource) return a;
  }
  throw conflict('the request resolved to no project: use a project-scoped credential or pass ?project=');
}

/**
 * The owner gate of spec 1 §4.12: a project admin, or the user who deployed the agent. An
 * agent with no recorded owner is reserved to admins (403); someone else's agent is a 404
 * identical to an unknown one.
 */
export function requireOwner(access: ProjectAccess, principal: Principal, agent: AgentRow | undefined, name: string): AgentRow {
  if (!agent) throw unknownAgent(name);
  if (access.resource === 'admin') return agent;
  if (!agent.owner) throw forbidden(`agent ${name} has no recorded owner: only a project admin may manage it`);
  if (agent.owner !== principal.email) throw unknownAgent(name);
  return agent;
}

/** Resolves project and agent and applies the owner gate: the preamble of every per-agent route. */
export function ownedAgent(ctx: AreaContext, principal: Principal, name: string, ref: string | undefined): { access: ProjectAccess; agent: AgentRow } {
  const access = resolveProject(ctx, principal, ref);
  const agent = requireOwner(access, principal, agentStore.byName(ctx.db, access.project.id, name), name);
  return { access, agent };
}

/** Project of an invoke: like resolveProject, but an anonymous caller lands on the default project. */
export function invokeProject(ctx: AreaContext, principal: Principal | undefined, ref: string | undefined, mustHaveAccess: boolean): ProjectRow {
  if (principal && mustHaveAccess) return resolveProject(ctx, principal, ref).project;
  if (ref) {
    const p = findProject(ctx.db, ref);
    if (!p) throw notFound('project not found');
    return p;
  }
  if (principal) {
    try {
      return resolveProject(ctx, principal, undefined).project;
    } catch {
      // fall through to the default project
    }
  }
  const def = stmt(ctx.db, 'SELECT * FROM acct_projects WHERE is_default = 1 LIMIT 1').get() as ProjectRow | undefined;
  if (!def) throw conflict('the request resolved to no project: pass ?project=');
  return def;
}
