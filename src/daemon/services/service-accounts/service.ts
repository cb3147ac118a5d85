import type { ServiceAccountView } from '../../../api/service-accounts.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { anchorPage, parseAnchored } from '../../http/anchored-paging.js';
import { conflict, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { ProjectRow } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import { serviceAccountEmail } from '../auth/credentials.js';
import { createKey, keyView } from '../auth/keys.js';
import type { Principal } from '../auth/principal.js';
import { personProjectAccess } from '../auth/machine-guard.js';
import { keyByRef, revokeKey } from '../auth/store.js';
import {
  insertServiceAccount,
  nameTaken,
  newestKeyRowid,
  serviceAccountByRef,
  serviceAccountKeyPage,
  serviceAccountPage,
  softDeleteServiceAccount,
  type ServiceAccountRow,
} from './store.js';

export function serviceAccountView(row: ServiceAccountRow, project: ProjectRow): ServiceAccountView {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    email: serviceAccountEmail(row.name, project.short),
    display_name: row.display_name,
    ...(row.role ? { role: row.role } : {}),
    disabled: Boolean(row.disabled),
    created_at: row.created_at,
    ...(row.deleted_at ? { deleted_at: row.deleted_at } : {}),
  };
}

/** The account named by `{sa}` (id or name); deleted accounts count as absent unless asked for. */
function findAccount(ctx: AreaContext, project: ProjectRow, ref: string, opts: { includeDeleted?: boolean } = {}): ServiceAccountRow {
  const row = serviceAccountByRef(ctx.db, project.id, ref);
  if (!row || (row.deleted_at && !opts.includeDeleted)) throw notFound('service account not found');
  return row;
}

export function listServiceAccounts(ctx: AreaContext, principal: Principal, ref: string, query: PageQuery) {
  const { project } = accessProject(ctx, principal, ref, 'member');
  const page = ctx.pager.parse(query, `service-accounts:${project.id}`);
  const { items, next_page_token } = ctx.pager.slice(page, serviceAccountPage(ctx.db, project.id, page.offset, page.size + 1));
  return { service_accounts: items.map((r) => serviceAccountView(r, project)), ...(next_page_token ? { next_page_token } : {}) };
}

/**
 * POST service-accounts (resource admin). The account is also a project member with its role;
 * its name is reserved for good, deleted or not (spec 1 §4.10).
 */
export function createServiceAccount(
  ctx: AreaContext,
  principal: Principal,
  ref: string,
  body: { name: string; display_name?: string; description?: string; role: 'admin' | 'member' },
  requestId: string,
) {
  const { db, clock } = ctx;
  const { project, person: p } = personProjectAccess(ctx, principal, ref, 'resource-admin');
  return tx(db, () => {
    if (nameTaken(db, project.id, body.name)) throw conflict(`service account name ${body.name} is taken (names are reserved permanently, even after deletion)`);
    const id = newId();
    const at = isoNow(clock);
    insertServiceAccount(db, {
      id,
      projectId: project.id,
      name: body.name,
      displayName: body.display_name ?? body.description ?? body.name,
      role: body.role,
      createdAt: at,
      grantId: newId(),
      grantedBy: p.email,
    });
    const view = serviceAccountView(findAccount(ctx, project, id), project);
    writeAudit(db, clock, { projectId: project.id, actor: p.email, action: 'service_account.create', target: view.email, details: { service_account_id: id, role: body.role }, requestId });
    return { service_account: view, note: `the account is a project ${body.role}; create a key with POST .../service-accounts/${body.name}/keys` };
  });
}

/** DELETE (resource admin): soft delete, grant removed, every key revoked, name kept reserved. */
export function deleteServiceAccount(ctx: AreaContext, principal: Principal, ref: string, saRef: string, requestId: string) {
  const { db, clock } = ctx;
  const { project, person: p } = personProjectAccess(ctx, principal, ref, 'resource-admin');
  return tx(db, () => {
    const row = findAccount(ctx, project, saRef);
    const revoked = softDeleteServiceAccount(db, row.id, isoNow(clock));
    const view = serviceAccountView(findAccount(ctx, project, row.id, { includeDeleted: true }), project);
    writeAudit(db, clock, { projectId: project.id, actor: p.email, action: 'service_account.delete', target: view.email, details: { service_account_id: row.id, revoked_keys: revoked }, requestId });
    return { deleted: true as const, service_account: view, revoked_keys: revoked, note: `its keys stopped working; the name ${row.name} stays reserved` };
  });
}

/** Keys of one account, newest first (member); a deleted account's keys stay listed as history. */
export function listServiceAccountKeys(ctx: AreaContext, principal: Principal, ref: string, saRef: string, query: PageQuery) {
  const { project } = accessProject(ctx, principal, ref, 'member');
  const sa = findAccount(ctx, project, saRef, { includeDeleted: true });
  const prefix = `sa-keys:${sa.id}`;
  const parsed = parseAnchored(ctx.pager, query, prefix);
  const anchor = parsed.anchor ?? newestKeyRowid(ctx.db, sa.id);
  const page = anchorPage(parsed.page, prefix, anchor);
  const { items, next_page_token } = ctx.pager.slice(page, serviceAccountKeyPage(ctx.db, sa.id, anchor, page.offset, page.size + 1));
  return { keys: items.map((r) => keyView(r, ctx.clock)), ...(next_page_token ? { next_page_token } : {}) };
}

export function createServiceAccountKey(
  ctx: AreaContext,
  principal: Principal,
  ref: string,
  saRef: string,
  body: { display_name: string; expires_in_days?: number },
  requestId: string,
) {
  const { db, clock } = ctx;
  const access = personProjectAccess(ctx, principal, ref, 'resource-admin');
  const { project, person: p } = access;
  return tx(db, () => {
    const sa = findAccount(ctx, project, saRef, { includeDeleted: true });
    if (sa.deleted_at) throw conflict('service account is deleted: it cannot get new keys');
    if (sa.disabled) throw conflict('service account is disabled: it cannot get new keys');
    const grant = access.breakGlassGrantId ? breakGlassGrant(db, access.breakGlassGrantId) : undefined;
    const { row, secret } = createKey(db, clock, { kind: 'service_account', serviceAccountId: sa.id, projectId: project.id }, body.display_name, body.expires_in_days, grant);
    writeAudit(db, clock, {
      projectId: project.id,
      actor: p.email,
      action: 'key.create',
      target: row.key_id,
      details: { kind: 'service_account', service_account: sa.name, expires_at: row.expires_at ?? undefined, ...(grant ? { break_glass_grant_id: grant.id } : {}) },
      requestId,
    });
    const bound = grant ? '; minted under break-glass, it stops working when that grant ends' : '';
    return { key: keyView(row, clock), secret, note: `store this secret now: it is shown only once and cannot be retrieved later${bound}` };
  });
}

function breakGlassGrant(db: AreaContext['db'], id: string): { id: string; expiresAt: string } {
  const g = db.prepare('SELECT id, expires_at FROM acct_project_members WHERE id = ?').get(id) as { id: string; expires_at: string };
  return { id: g.id, expiresAt: g.expires_at };
}

export function revokeServiceAccountKey(ctx: AreaContext, principal: Principal, ref: string, saRef: string, keyRef: string, requestId: string) {
  const { db, clock } = ctx;
  const { project, person: p } = personProjectAccess(ctx, principal, ref, 'resource-admin');
  return tx(db, () => {
    const sa = findAccount(ctx, project, saRef, { includeDeleted: true });
    const key = keyByRef(db, keyRef);
    // A key of another account (or a personal key) is indistinguishable from an unknown one.
    if (!key || key.kind !== 'service_account' || key.service_account_id !== sa.id) throw notFound('key not found');
    if (!key.revoked_at) {
      revokeKey(db, key.id, isoNow(clock));
      writeAudit(db, clock, { projectId: project.id, actor: p.email, action: 'key.revoke', target: key.key_id, details: { kind: 'service_account', service_account: sa.name }, requestId });
    }
    return { revoked: key.key_id, note: key.revoked_at ? 'the key was already revoked' : 'the key stopped working immediately' };
  });
}
