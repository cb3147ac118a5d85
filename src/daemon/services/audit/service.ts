import type { AuditEntry } from '../../../api/audit.js';
import type { AuditQuery } from '../../../api/audit.js';
import type { AreaContext } from '../../area.js';
import { anchorPage, parseAnchored } from '../../http/anchored-paging.js';
import type { Principal } from '../auth/principal.js';
import { accessProject } from '../accounts/projects.js';
import { refuseWorkload } from '../auth/machine-guard.js';
import { auditPage, newestSeq, type AuditRow, type AuditScope } from './store.js';

export function auditView(row: AuditRow): AuditEntry {
  let details: Record<string, unknown> = {};
  try {
    details = JSON.parse(row.details) as Record<string, unknown>;
  } catch {
    // a row written by hand with bad JSON still lists, without details
  }
  return {
    id: row.id,
    ts: row.ts,
    actor: row.actor,
    action: row.action,
    target: row.target,
    details,
    ...(row.request_id ? { request_id: row.request_id } : {}),
  };
}

/**
 * A project's audit log, newest first (spec 1 §4.11: readable by any project member; a platform
 * admin, who holds metadata authority everywhere, may read it too).
 */
export function listAudit(ctx: AreaContext, principal: Principal, ref: string, query: AuditQuery) {
  const { project } = accessProject(ctx, principal, ref, 'visible');
  refuseWorkload(principal);
  return auditList(ctx, { projectId: project.id, action: query.action, actor: query.actor }, `audit:${project.id}`, query);
}

/** The platform's own rows (no project): platform admins only, gated by the route. */
export function listPlatformAudit(ctx: AreaContext, query: AuditQuery) {
  return auditList(ctx, { projectId: null, action: query.action, actor: query.actor }, 'audit:platform', query);
}

function auditList(ctx: AreaContext, scope: AuditScope, base: string, query: AuditQuery) {
  // Filters are part of the list key, so a token cannot be replayed against other filters.
  const filters = [scope.action ? `a=${encodeURIComponent(scope.action)}` : '', scope.actor ? `u=${encodeURIComponent(scope.actor.toLowerCase())}` : '']
    .filter(Boolean)
    .join('&');
  const prefix = filters ? `${base}?${filters}` : base;
  const parsed = parseAnchored(ctx.pager, query, prefix);
  const anchor = parsed.anchor ?? newestSeq(ctx.db, scope);
  const page = anchorPage(parsed.page, prefix, anchor);
  const rows = auditPage(ctx.db, scope, anchor, page.offset, page.size + 1);
  const { items, next_page_token } = ctx.pager.slice(page, rows);
  return { entries: items.map(auditView), ...(next_page_token ? { next_page_token } : {}) };
}
