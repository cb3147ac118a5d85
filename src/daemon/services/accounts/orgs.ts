import type { OrgMemberView, OrgView } from '../../../api/orgs.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { badRequest, conflict, forbidden, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { PersonPrincipal } from '../auth/principal.js';
import { userByEmail, userById } from '../auth/store.js';
import type { GrantRole } from './access.js';
import {
  countOrgAdmins,
  deleteOrg,
  deleteOrgMember,
  insertOrg,
  insertOrgMember,
  listOrgMembers,
  listOrgs,
  orgById,
  orgBySlug,
  orgMember,
  setOrgMemberRole,
  type OrgMemberRow,
  type OrgRow,
} from './orgs-store.js';
import { isUuid } from './validate-ids.js';

/** Organizations and their members (spec 1 §4.4); every route is platform-admin only. */

const orgView = (o: OrgRow): OrgView => ({ id: o.id, slug: o.slug, name: o.name, created_at: o.created_at, projects: o.projects, users: o.users });
const memberView = (m: OrgMemberRow): OrgMemberView => ({ user_id: m.user_id, email: m.email, role: m.role, created_at: m.created_at });

function mustOrg(ctx: AreaContext, orgId: string): OrgRow {
  if (!isUuid(orgId)) throw badRequest('orgID must be a UUID');
  const org = orgById(ctx.db, orgId);
  if (!org) throw notFound('organization not found');
  return org;
}

/** The member addressed by `{userID}`: a user id, or an e-mail for convenience. */
function mustMember(ctx: AreaContext, orgId: string, ref: string): OrgMemberRow {
  const user = isUuid(ref) ? userById(ctx.db, ref) : userByEmail(ctx.db, ref);
  const m = user && orgMember(ctx.db, orgId, user.id);
  if (!m) throw notFound('no such member of this organization');
  return m;
}

export function listOrgsPage(ctx: AreaContext, query: PageQuery) {
  const page = ctx.pager.parse(query, 'orgs');
  const { items, next_page_token } = ctx.pager.slice(page, listOrgs(ctx.db, page.size + 1, page.offset));
  return { orgs: items.map(orgView), ...(next_page_token ? { next_page_token } : {}) };
}

export function createOrg(ctx: AreaContext, caller: PersonPrincipal, body: { slug: string; name?: string }, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    if (orgBySlug(db, body.slug)) throw conflict(`an organization with slug ${body.slug} already exists`);
    const id = newId();
    insertOrg(db, { id, slug: body.slug, name: body.name ?? body.slug, createdAt: isoNow(clock) });
    writeAudit(db, clock, { actor: caller.email, action: 'org.create', target: body.slug, requestId, details: { org_id: id } });
    return orgView(orgById(db, id)!);
  });
}

export function removeOrg(ctx: AreaContext, caller: PersonPrincipal, orgId: string, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const org = mustOrg(ctx, orgId);
    if (org.slug === 'default') throw forbidden('the default organization cannot be deleted');
    if (org.projects > 0) throw conflict(`organization ${org.slug} still has ${org.projects} project(s): delete them first`);
    if (org.users > 0) throw conflict(`organization ${org.slug} still has ${org.users} user(s): remove or delete them first`);
    deleteOrg(db, org.id);
    writeAudit(db, clock, { actor: caller.email, action: 'org.delete', target: org.slug, requestId, details: { org_id: org.id } });
    return { deleted: true as const, org: orgView(org) };
  });
}

export function listOrgMembersPage(ctx: AreaContext, orgId: string, query: PageQuery) {
  const org = mustOrg(ctx, orgId);
  const page = ctx.pager.parse(query, `org-members:${org.id}`);
  const { items, next_page_token } = ctx.pager.slice(page, listOrgMembers(ctx.db, org.id, page.size + 1, page.offset));
  return { members: items.map(memberView), ...(next_page_token ? { next_page_token } : {}) };
}

/**
 * Org admins inherit admin on every project of the org, so making oneself org admin would be a
 * self-grant on contents: refused like the project routes (issue 17, spec 1 §5).
 */
function refuseSelfOrgAdmin(caller: PersonPrincipal, userId: string, role: GrantRole): void {
  if (role === 'admin' && userId === caller.userId) {
    throw forbidden(
      'a platform admin cannot make itself admin of an organization: org admins inherit admin on every project of the organization, and the only route into project contents is break-glass (POST /v1/projects/{projectID}/break-glass with a reason)',
    );
  }
}

/**
 * An org admin grant or removal changes who administers every project of the org; the org rows
 * carry no project, so a row goes into each project's own log where its members can see it.
 */
function auditIntoProjects(ctx: AreaContext, orgId: string, entry: { actor: string; action: string; target: string; requestId: string; details: Record<string, unknown> }): void {
  const projects = ctx.db.prepare('SELECT id FROM acct_projects WHERE org_id = ?').all(orgId) as { id: string }[];
  for (const p of projects) writeAudit(ctx.db, ctx.clock, { ...entry, projectId: p.id });
}

const ADMIN_NOTE = 'org admins inherit admin on every project of the organization, live, without membership rows';

export function addOrgMember(
  ctx: AreaContext,
  caller: PersonPrincipal,
  orgId: string,
  body: { email: string; role: GrantRole },
  requestId: string,
) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const org = mustOrg(ctx, orgId);
    const user = userByEmail(db, body.email);
    if (!user) throw notFound(`no account for ${body.email}: create it first with POST /v1/users`);
    const existing = orgMember(db, org.id, user.id);
    if (existing?.role !== 'admin') refuseSelfOrgAdmin(caller, user.id, body.role);
    if (existing) {
      if (existing.role !== body.role) {
        throw conflict(`${user.email} is already a member of ${org.slug} with role ${existing.role}: change it with PATCH /v1/orgs/${org.id}/members/${user.id}`);
      }
      return { status: 200, body: { member: memberView(existing), note: `${user.email} is already a member with role ${existing.role}` } };
    }
    insertOrgMember(db, org.id, user.id, body.role, isoNow(clock));
    writeAudit(db, clock, { actor: caller.email, action: 'org.member.add', target: user.email, requestId, details: { org_id: org.id, role: body.role } });
    if (body.role === 'admin') {
      auditIntoProjects(ctx, org.id, { actor: caller.email, action: 'org.member.add', target: user.email, requestId, details: { org_id: org.id, org: org.slug, role: 'admin', inherited: 'admin on every project of the organization' } });
    }
    const member = memberView(orgMember(db, org.id, user.id)!);
    return { status: 201, body: { member, ...(body.role === 'admin' ? { note: ADMIN_NOTE } : {}) } };
  });
}

export function updateOrgMember(
  ctx: AreaContext,
  caller: PersonPrincipal,
  orgId: string,
  userRef: string,
  role: GrantRole,
  requestId: string,
) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const org = mustOrg(ctx, orgId);
    const m = mustMember(ctx, org.id, userRef);
    if (m.role === role) return { member: memberView(m), note: `nothing changed: ${m.email} already has role ${role}` };
    refuseSelfOrgAdmin(caller, m.user_id, role);
    if (m.role === 'admin' && countOrgAdmins(db, org.id) <= 1) throw conflict(`${m.email} is the only admin of ${org.slug}: make another member admin first`);
    setOrgMemberRole(db, org.id, m.user_id, role);
    writeAudit(db, clock, { actor: caller.email, action: 'org.member.update', target: m.email, requestId, details: { org_id: org.id, from: m.role, to: role } });
    auditIntoProjects(ctx, org.id, { actor: caller.email, action: 'org.member.update', target: m.email, requestId, details: { org_id: org.id, org: org.slug, from: m.role, to: role } });
    const note = role === 'admin' ? ADMIN_NOTE : `${m.email} no longer inherits admin on the projects of ${org.slug}`;
    return { member: memberView(orgMember(db, org.id, m.user_id)!), note };
  });
}

export function removeOrgMember(ctx: AreaContext, caller: PersonPrincipal, orgId: string, userRef: string, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const org = mustOrg(ctx, orgId);
    const m = mustMember(ctx, org.id, userRef);
    if (m.role === 'admin' && countOrgAdmins(db, org.id) <= 1) throw conflict(`${m.email} is the only admin of ${org.slug}: make another member admin first`);
    deleteOrgMember(db, org.id, m.user_id);
    writeAudit(db, clock, { actor: caller.email, action: 'org.member.remove', target: m.email, requestId, details: { org_id: org.id, role: m.role } });
    if (m.role === 'admin') {
      auditIntoProjects(ctx, org.id, { actor: caller.email, action: 'org.member.remove', target: m.email, requestId, details: { org_id: org.id, org: org.slug, role: 'admin' } });
    }
    return {
      deleted: true as const,
      user_id: m.user_id,
      note: `${m.email} left ${org.slug}; the account and its direct project grants remain`,
    };
  });
}
