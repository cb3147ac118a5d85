import type { MemberView } from '../../../api/members.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { conflict, notFound } from '../../http/errors.js';
import { tx } from '../../store/db.js';
import { serviceAccountEmail } from '../auth/credentials.js';
import { refuseWorkload } from '../auth/machine-guard.js';
import type { PersonPrincipal, Principal } from '../auth/principal.js';
import { revokeKeysOfGrant, userByEmail, userById, type UserRow } from '../auth/store.js';
import { refuseSelfGrant, type GrantRole, type ProjectRow } from './access.js';
import {
  deleteMemberRow,
  directGrant,
  expireMemberRow,
  insertMemberRow,
  listMembers,
  otherRealAdmins,
  liveBreakGlass,
  memberById,
  serviceAccountGrant,
  serviceAccountInProject,
  setMemberRole,
  type MemberRow,
} from './members-store.js';
import { accessProject } from './projects.js';
import { isUuid } from './validate-ids.js';

/** Project members on both axes (spec 1 §4.6); writes need metadata admin and a person. */

/** Member view of spec 1 §2.6; a service account's row carries its id as user_id too. */
export function memberView(m: MemberRow, nowMs: number): MemberView {
  const sa = m.service_account_id !== null;
  const view: MemberView = {
    user_id: (sa ? m.service_account_id : m.user_id)!,
    email: sa ? serviceAccountEmail(m.sa_name ?? '', m.project_short) : (m.email ?? ''),
    role: m.role,
    kind: sa ? 'service_account' : 'user',
    ...(sa ? { service_account_id: m.service_account_id! } : {}),
    external: !sa && !m.org_id,
    created_at: m.created_at,
  };
  if (m.break_glass) {
    Object.assign(view, {
      break_glass: true,
      expires_at: m.expires_at!,
      reason: m.reason ?? '',
      granted_by: m.granted_by ?? '',
      expired: Date.parse(m.expires_at!) <= nowMs,
    });
  }
  return view;
}

export function listMembersPage(ctx: AreaContext, principal: Principal, ref: string, query: PageQuery) {
  const { project } = accessProject(ctx, principal, ref, 'visible');
  refuseWorkload(principal);
  const page = ctx.pager.parse(query, `members:${project.id}`);
  const { items, next_page_token } = ctx.pager.slice(page, listMembers(ctx.db, project.id, page.size + 1, page.offset));
  const now = ctx.clock.now();
  return { members: items.map((m) => memberView(m, now)), ...(next_page_token ? { next_page_token } : {}) };
}

/**
 * Grants a role to an existing account, inside the caller's transaction. Shared with invitations
 * (an invitation to an existing account becomes a grant). Same role again is a no-op (200);
 * a different existing role is a 409 pointing at PATCH, like organization members.
 */
export function grantExistingAccount(
  ctx: AreaContext,
  project: ProjectRow,
  user: UserRow,
  role: GrantRole,
  actor: string,
  requestId: string,
): { created: boolean; member: MemberView; note: string } {
  const { db, clock } = ctx;
  const existing = directGrant(db, project.id, user.id);
  if (existing) {
    if (existing.role !== role) {
      throw conflict(`${user.email} is already a member with role ${existing.role}: change it with PATCH /v1/projects/${project.id}/members/${user.id}`);
    }
    return { created: false, member: memberView(existing, clock.now()), note: `${user.email} already has role ${role}; nothing changed` };
  }
  const id = insertMemberRow(db, { projectId: project.id, userId: user.id, role, createdAt: isoNow(clock) });
  writeAudit(db, clock, { projectId: project.id, actor, action: 'member.add', target: user.email, requestId, details: { role } });
  return { created: true, member: memberView(memberById(db, id)!, clock.now()), note: `role ${role} granted to the existing account ${user.email}` };
}

export function addMember(ctx: AreaContext, caller: PersonPrincipal, ref: string, body: { email: string; role: GrantRole }, requestId: string) {
  return tx(ctx.db, () => {
    const access = accessProject(ctx, caller, ref, 'metadata-admin');
    const { project } = access;
    const user = userByEmail(ctx.db, body.email);
    if (!user) throw notFound(`no account for ${body.email}: invite them instead (POST /v1/projects/${project.slug}/invitations)`);
    refuseSelfGrant(access, caller.userId, user.id);
    const r = grantExistingAccount(ctx, project, user, body.role, caller.email, requestId);
    return { status: r.created ? 201 : 200, body: { member: r.member, note: r.note } };
  });
}

/** `{userID}` is a user id; an e-mail is accepted too, which is what people type. */
function userFor(ctx: AreaContext, ref: string): UserRow | undefined {
  return isUuid(ref) ? userById(ctx.db, ref) : userByEmail(ctx.db, ref);
}

function guardLastAdmin(ctx: AreaContext, project: ProjectRow, grant: MemberRow, action: string): void {
  if (grant.role === 'admin' && otherRealAdmins(ctx.db, project.id, project.org_id, grant.id) === 0) {
    throw conflict(`cannot ${action} the last admin of project ${project.slug}: make another member admin first (break-glass, expired and service-account admins do not count)`);
  }
}

export function updateMember(ctx: AreaContext, caller: PersonPrincipal, ref: string, userRef: string, role: GrantRole, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const access = accessProject(ctx, caller, ref, 'metadata-admin');
    const { project } = access;
    const user = userFor(ctx, userRef);
    const grant = user && directGrant(db, project.id, user.id);
    if (!user || !grant) throw notFound('no such member of this project (break-glass grants cannot be changed, only ended early)');
    if (grant.role !== role) {
      if (role === 'admin') refuseSelfGrant(access, caller.userId, user.id);
      if (role === 'member') guardLastAdmin(ctx, project, grant, 'demote');
      setMemberRole(db, grant.id, role);
      writeAudit(db, clock, { projectId: project.id, actor: caller.email, action: 'member.update', target: user.email, requestId, details: { from: grant.role, to: role } });
    }
    return { user_id: user.id, role };
  });
}

/** Removes a user's direct grant, and ends any live break-glass grant early (kept as history). */
export function removeMember(ctx: AreaContext, caller: PersonPrincipal, ref: string, userRef: string, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const { project } = accessProject(ctx, caller, ref, 'metadata-admin');
    const user = userFor(ctx, userRef);
    const now = isoNow(clock);
    const grant = user && directGrant(db, project.id, user.id);
    const glass = user ? liveBreakGlass(db, project.id, user.id, now) : [];
    if (!user || (!grant && !glass.length)) throw notFound('no such member of this project');
    if (grant) {
      guardLastAdmin(ctx, project, grant, 'remove');
      deleteMemberRow(db, grant.id);
      writeAudit(db, clock, { projectId: project.id, actor: caller.email, action: 'member.remove', target: user.email, requestId, details: { role: grant.role } });
    }
    for (const g of glass) {
      expireMemberRow(db, g.id, now);
      // Keys minted under the grant already fail (credentials.ts checks the grant); revoking them shows it in key lists.
      const keys = revokeKeysOfGrant(db, g.id, now);
      writeAudit(db, clock, { projectId: project.id, actor: caller.email, action: 'break_glass.revoke', target: user.email, requestId, details: { grant_id: g.id, ...(keys.length ? { revoked_keys: keys } : {}) } });
    }
    const note = grant
      ? `${user.email} no longer has a grant on ${project.slug}`
      : `break-glass grant of ${user.email} ended early; it stays listed as expired`;
    return { deleted: true as const, user_id: user.id, note };
  });
}

/** `{saID}` is the service account's id or its name within the project. */
function saGrant(ctx: AreaContext, project: ProjectRow, saRef: string): MemberRow {
  const sa = serviceAccountInProject(ctx.db, project.id, saRef);
  const grant = sa && serviceAccountGrant(ctx.db, project.id, sa.id);
  if (!grant) throw notFound('no such service account member of this project');
  return grant;
}

export function updateServiceAccountMember(ctx: AreaContext, caller: PersonPrincipal, ref: string, saRef: string, role: GrantRole, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const { project } = accessProject(ctx, caller, ref, 'metadata-admin');
    const grant = saGrant(ctx, project, saRef);
    if (grant.role !== role) {
      setMemberRole(db, grant.id, role);
      writeAudit(db, clock, {
        projectId: project.id,
        actor: caller.email,
        action: 'member.service_account.update',
        target: grant.sa_name ?? grant.service_account_id!,
        requestId,
        details: { from: grant.role, to: role },
      });
    }
    return { service_account_id: grant.service_account_id!, role };
  });
}

export function removeServiceAccountMember(ctx: AreaContext, caller: PersonPrincipal, ref: string, saRef: string, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const { project } = accessProject(ctx, caller, ref, 'metadata-admin');
    const grant = saGrant(ctx, project, saRef);
    deleteMemberRow(db, grant.id);
    writeAudit(db, clock, {
      projectId: project.id,
      actor: caller.email,
      action: 'member.service_account.remove',
      target: grant.sa_name ?? grant.service_account_id!,
      requestId,
      details: { role: grant.role },
    });
    return {
      deleted: true as const,
      service_account_id: grant.service_account_id!,
      note: 'grant removed; the service account and its keys live on without a role on the project',
    };
  });
}
