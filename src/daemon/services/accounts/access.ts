import { stmt, type Db } from '../../store/db.js';
import type { Clock } from '../../clock.js';
import type { Principal } from '../auth/principal.js';
import { forbidden, notFound } from '../../http/errors.js';

export type GrantRole = 'admin' | 'member';

export interface ProjectRow {
  id: string;
  org_id: string;
  slug: string;
  name: string;
  short: string;
  is_default: number;
  created_at: string;
}

/** Authority of one caller over one project, on the two axes of spec 1 §1. */
export interface ProjectAccess {
  project: ProjectRow;
  /** Contents authority: agents, secrets, data services. */
  resource?: GrantRole;
  /** Object authority: rename, delete, membership. */
  metadata?: GrantRole;
  /** How the resource role was obtained, for members views and audit. */
  via?: 'direct' | 'org-admin' | 'break-glass' | 'service-account';
  /** A workload key of this project: visible, but holds no role (it may only mint a secret read token). */
  workload?: boolean;
  /** The live break-glass grant that gives the resource role, when it is the only one (issue 17: credentials die with it). */
  breakGlassGrantId?: string;
  /** True when metadata admin comes from the platform admin role alone (no direct admin grant, no org admin). */
  metadataByPlatformOnly?: boolean;
}

/** What a route needs from the caller on the project (spec 1 §4.1 auth gates). */
export type ProjectNeed = 'visible' | 'member' | 'resource-admin' | 'metadata-admin';

const ROLE_RANK: Record<GrantRole, number> = { member: 1, admin: 2 };
const best = (a?: GrantRole, b?: GrantRole): GrantRole | undefined =>
  !a ? b : !b ? a : ROLE_RANK[a] >= ROLE_RANK[b] ? a : b;

/**
 * Resolves a caller's live authority over a project. Nothing is cached: roles and grants are
 * re-read on every request, so a removal or demotion takes effect at once.
 */
export function projectAccess(db: Db, clock: Clock, principal: Principal, project: ProjectRow): ProjectAccess {
  const access: ProjectAccess = { project };
  if (principal.kind === 'service_account') {
    if (principal.projectId !== project.id) return access;
    const row = stmt(db, 'SELECT role FROM acct_project_members WHERE project_id = ? AND service_account_id = ?').get(project.id, principal.serviceAccountId) as { role: GrantRole } | undefined;
    if (row) Object.assign(access, { resource: row.role, metadata: row.role, via: 'service-account' });
    return access;
  }
  if (principal.kind === 'workload') {
    // A workload key is bound to its project but holds no role: it may only mint a secret read token.
    if (principal.projectId === project.id) access.workload = true;
    return access;
  }
  const user = stmt(db, 'SELECT role FROM acct_users WHERE id = ?').get(principal.userId) as { role: string } | undefined;
  if (!user) return access;
  const now = new Date(clock.now()).toISOString();
  const rows = stmt(
    db,
    `SELECT id, role, break_glass, expires_at FROM acct_project_members
     WHERE project_id = ? AND user_id = ? AND (break_glass = 0 OR expires_at > ?)`,
  ).all(project.id, principal.userId, now) as { id: string; role: GrantRole; break_glass: number }[];
  for (const r of rows) {
    if (r.break_glass) {
      access.resource = best(access.resource, r.role);
      access.via ??= 'break-glass';
      access.breakGlassGrantId = r.id;
    } else {
      access.resource = best(access.resource, r.role);
      access.metadata = best(access.metadata, r.role);
      access.via = 'direct';
    }
  }
  const orgAdmin = stmt(db, `SELECT 1 FROM acct_org_members WHERE org_id = ? AND user_id = ? AND role = 'admin'`).get(project.org_id, principal.userId);
  if (orgAdmin) {
    // Org admins inherit admin on every project of the org, live, with no rows written.
    if (access.resource !== 'admin') access.via = 'org-admin';
    access.resource = 'admin';
    access.metadata = 'admin';
  }
  if (access.via !== 'break-glass') delete access.breakGlassGrantId;
  // Platform admin: metadata authority everywhere, resource authority only via break-glass.
  if (user.role === 'admin') {
    if (access.metadata !== 'admin') access.metadataByPlatformOnly = true;
    access.metadata = 'admin';
  }
  return access;
}

export const isVisible = (a: ProjectAccess) => Boolean(a.resource || a.metadata || a.workload);

/**
 * Enforces a project gate. A caller with no grant on either axis gets 404, identical to a
 * missing project (the 404-not-403 rule); a caller with some grant but too little gets 403.
 */
export function requireProjectAccess(access: ProjectAccess, need: ProjectNeed): ProjectAccess {
  if (!isVisible(access)) throw notFound('project not found');
  switch (need) {
    case 'visible':
      return access;
    case 'member':
      if (!access.resource) throw forbidden('this action requires a project role (member or admin) on the project contents');
      return access;
    case 'resource-admin':
      if (access.resource !== 'admin') throw forbidden('this action requires the admin role on the project');
      return access;
    case 'metadata-admin':
      if (access.metadata !== 'admin') throw forbidden('this action requires the admin role on the project');
      return access;
  }
}

/** Finds a project by id, short or slug (spec 1 §4.1: ?project=<slug, short or id>). */
export function findProject(db: Db, ref: string): ProjectRow | undefined {
  return stmt(db, 'SELECT * FROM acct_projects WHERE id = ? OR short = ? OR slug = ? LIMIT 1').get(ref, ref, ref) as
    | ProjectRow
    | undefined;
}

/** Where a platform admin's self-grants are refused: the only route into contents is break-glass (spec 1 §5, §4.7). */
export const SELF_GRANT_REFUSED =
  'a platform admin holds metadata authority only and cannot grant itself a role on project contents: use break-glass (POST /v1/projects/{projectID}/break-glass with a reason), which is time-limited and visible to the project\'s members';

/** Refuses a grant to oneself whose only authority is the platform admin role. */
export function refuseSelfGrant(access: ProjectAccess, callerUserId: string, granteeUserId: string): void {
  if (callerUserId === granteeUserId && access.metadataByPlatformOnly) throw forbidden(SELF_GRANT_REFUSED);
}
