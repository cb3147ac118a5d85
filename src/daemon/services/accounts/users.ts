import type { z } from 'zod';
import type { CreateUserBody, UserView } from '../../../api/users.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { badRequest, conflict, forbidden, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import { generatePassword, hashPassword, passwordProblem } from '../auth/passwords.js';
import type { PersonPrincipal } from '../auth/principal.js';
import { setPassword, userByEmail, userById, type UserRow } from '../auth/store.js';
import { projectAccess } from './access.js';
import { insertOrgMember, orgById } from './orgs-store.js';
import {
  countPlatformAdmins,
  deleteUser,
  insertUser,
  listUsers,
  orgAdminOf,
  projectAdminAnywhere,
  projectAdminIn,
  projectsOfUser,
  projectsOnlyAdministeredBy,
  setUserRole,
} from './users-store.js';
import { isUuid } from './validate-ids.js';

/**
 * User view of spec 1 §2.4. `agents` holds the names the caller may see: agents of the user's
 * projects on which the caller holds a resource grant (a platform admin holds none without
 * break-glass). Agent names come from the agents area through ctx.hooks.agentNames.
 */
export function userView(ctx: AreaContext, caller: PersonPrincipal, u: UserRow): UserView {
  const projects = projectsOfUser(ctx.db, u.id, isoNow(ctx.clock));
  const scoped = projects.filter((p) => projectAccess(ctx.db, ctx.clock, caller, p).resource).map((p) => p.id);
  const agents = scoped.length ? [...new Set(ctx.hooks.agentNames.flatMap((h) => h(scoped)))].sort() : [];
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    must_change_password: Boolean(u.must_change_password),
    ...(u.org_id ? { org_id: u.org_id } : {}),
    external: !u.org_id,
    created_at: u.created_at,
    projects: projects.map((p) => p.slug),
    agents,
    agent_count: agents.length,
  };
}

export function listUsersPage(ctx: AreaContext, caller: PersonPrincipal, query: PageQuery) {
  const page = ctx.pager.parse(query, 'users');
  const { items, next_page_token } = ctx.pager.slice(page, listUsers(ctx.db, page.size + 1, page.offset));
  const unowned = [...new Set(ctx.hooks.unownedAgents.flatMap((h) => h()))].sort();
  return {
    users: items.map((u) => userView(ctx, caller, u)),
    unowned_agents: unowned,
    ...(next_page_token ? { next_page_token } : {}),
  };
}

const mustFind = (ctx: AreaContext, email: string) => {
  const u = userByEmail(ctx.db, email);
  if (!u) throw notFound(`no account for ${email.trim().toLowerCase()}`);
  return u;
};

/**
 * Creates an account (spec 1 §4.3). Platform admins create anywhere; org admins in the orgs they
 * administer; project admins only in their own home organization. Every new account owes a
 * first-login password change, generated passwords included.
 */
export async function createUser(
  ctx: AreaContext,
  caller: PersonPrincipal,
  body: z.output<typeof CreateUserBody>,
  requestId: string,
) {
  const { db, clock } = ctx;
  const creator = userById(db, caller.userId)!;
  const platformAdmin = caller.platformRole === 'admin';
  if (body.role === 'admin' && !platformAdmin) throw forbidden('only a platform admin may create a platform admin');
  if (body.org_id !== undefined && (!isUuid(body.org_id) || !orgById(db, body.org_id))) {
    throw badRequest('invalid field org_id: must be the UUID of an existing organization');
  }
  const orgId = body.org_id ?? creator.org_id ?? undefined;
  if (!platformAdmin) {
    const orgAdminAny = orgAdminOf(db, caller.userId);
    const projectAdminAny = projectAdminAnywhere(db, caller.userId);
    if (!orgAdminAny && !projectAdminAny) throw forbidden('creating requires administering an organization or project');
    if (!orgId) throw forbidden('you have no home organization: pass org_id of an organization you administer');
    const allowed = orgAdminOf(db, caller.userId, orgId) || (orgId === creator.org_id && projectAdminIn(db, caller.userId, orgId));
    if (!allowed) throw forbidden('creating in that organization requires administering it');
  }
  if (body.password !== undefined) {
    const problem = passwordProblem(body.password);
    if (problem) throw badRequest(problem);
  }
  if (userByEmail(db, body.email)) {
    throw conflict(`an account for ${body.email} already exists: add the existing account as a project member instead (POST /v1/projects/{projectID}/members)`);
  }
  const temporary = body.password === undefined ? generatePassword() : undefined;
  const hash = await hashPassword(body.password ?? temporary!);
  return tx(db, () => {
    // Checked again inside the transaction: the hash above yields the event loop.
    if (userByEmail(db, body.email)) throw conflict(`an account for ${body.email} already exists: add the existing account as a project member instead`);
    const id = newId();
    const now = isoNow(clock);
    insertUser(db, { id, email: body.email, hash, role: body.role, orgId: orgId ?? null, createdAt: now });
    if (orgId) insertOrgMember(db, orgId, id, 'member', now);
    writeAudit(db, clock, {
      actor: caller.email,
      action: 'user.create',
      target: body.email,
      requestId,
      details: { role: body.role, org_id: orgId ?? null, generated_password: Boolean(temporary) },
    });
    const user = userView(ctx, caller, userById(db, id)!);
    const note = temporary
      ? 'account created with a temporary password, shown only now: the user must change it at first sign-in'
      : 'account created: the user must change the password at first sign-in';
    return { user, ...(temporary ? { temporary_password: temporary } : {}), note };
  });
}

/** Changes a platform role; effective on the next request because roles are re-read live. */
export function updateUser(ctx: AreaContext, caller: PersonPrincipal, email: string, body: { role?: 'admin' | 'user' }, requestId: string) {
  const { db, clock } = ctx;
  if (body.role === undefined) throw badRequest('empty body: send role (admin or user)');
  const role = body.role;
  return tx(db, () => {
    const u = mustFind(ctx, email);
    if (u.role === role) return { user: userView(ctx, caller, u), note: `nothing changed: ${u.email} already has role ${role}` };
    if (role === 'user') {
      if (u.id === caller.userId) throw badRequest('you cannot remove your own admin role; ask another platform admin');
      if (countPlatformAdmins(db) <= 1) throw conflict('cannot demote the last platform admin');
    }
    setUserRole(db, u.id, role);
    writeAudit(db, clock, { actor: caller.email, action: 'user.update_role', target: u.email, requestId, details: { from: u.role, to: role } });
    return { user: userView(ctx, caller, userById(db, u.id)!), note: `role of ${u.email} is now ${role}, effective immediately` };
  });
}

export function removeUser(ctx: AreaContext, caller: PersonPrincipal, email: string, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const u = mustFind(ctx, email);
    if (u.id === caller.userId) throw badRequest('you cannot delete your own account');
    if (u.role === 'admin' && countPlatformAdmins(db) <= 1) throw conflict('cannot delete the last platform admin');
    // The same rule as removing the member (spec 1 §4.6), for every project at once.
    const orphaned = projectsOnlyAdministeredBy(db, u.id);
    if (orphaned.length) {
      const slugs = orphaned.map((p) => p.slug);
      throw conflict(
        `cannot delete ${u.email}: the last admin of project${slugs.length > 1 ? 's' : ''} ${slugs.join(', ')}; make another member admin there first (break-glass, expired and service-account admins do not count)`,
        { projects: slugs },
      );
    }
    deleteUser(db, u.id);
    writeAudit(db, clock, { actor: caller.email, action: 'user.delete', target: u.email, requestId });
    return {
      deleted: true as const,
      email: u.email,
      note: 'account deleted with its grants and keys; agents it deployed keep running',
    };
  });
}

export async function resetPassword(ctx: AreaContext, caller: PersonPrincipal, email: string, requestId: string) {
  const { db, clock } = ctx;
  mustFind(ctx, email);
  const temporary = generatePassword();
  const hash = await hashPassword(temporary);
  return tx(db, () => {
    const u = mustFind(ctx, email);
    setPassword(db, u.id, hash, true);
    writeAudit(db, clock, { actor: caller.email, action: 'user.reset_password', target: u.email, requestId });
    return {
      email: u.email,
      temporary_password: temporary,
      note: 'temporary password shown only now: the user must change it at next sign-in; existing sessions stay valid until they expire',
    };
  });
}
