import type { Db } from '../../store/db.js';

export interface AuditRow {
  seq: number;
  id: string;
  project_id: string | null;
  ts: string;
  actor: string;
  action: string;
  target: string;
  details: string;
  request_id: string | null;
}

/** Which rows a list reads: one project's, or the platform's own (rows without a project). */
export interface AuditScope {
  projectId: string | null;
  action?: string;
  actor?: string;
}

function where(scope: AuditScope): { sql: string; args: unknown[] } {
  const parts = [scope.projectId === null ? 'project_id IS NULL' : 'project_id = ?'];
  const args: unknown[] = scope.projectId === null ? [] : [scope.projectId];
  if (scope.action) {
    // An exact action, or a dotted prefix: "auth" matches "auth.login_failed".
    parts.push(`(action = ? OR substr(action, 1, ?) = ?)`);
    args.push(scope.action, scope.action.length + 1, `${scope.action}.`);
  }
  if (scope.actor) {
    parts.push('actor = ? COLLATE NOCASE');
    args.push(scope.actor);
  }
  return { sql: parts.join(' AND '), args };
}

/** Newest sequence number in scope (0 when empty): the anchor of a first page. */
export function newestSeq(db: Db, scope: AuditScope): number {
  const w = where(scope);
  return (db.prepare(`SELECT COALESCE(MAX(seq), 0) AS s FROM acct_audit WHERE ${w.sql}`).get(...w.args) as { s: number }).s;
}

/** A page of rows in scope at or below the anchor, newest first. */
export function auditPage(db: Db, scope: AuditScope, anchor: number, offset: number, limit: number): AuditRow[] {
  const w = where(scope);
  return db
    .prepare(`SELECT * FROM acct_audit WHERE ${w.sql} AND seq <= ? ORDER BY seq DESC LIMIT ? OFFSET ?`)
    .all(...w.args, anchor, limit, offset) as AuditRow[];
}
