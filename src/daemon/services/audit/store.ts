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

/** Newest sequence number of a project's log (0 when empty): the anchor of a first page. */
export const newestSeq = (db: Db, projectId: string) =>
  (db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM acct_audit WHERE project_id = ?').get(projectId) as { s: number }).s;

/** A page of a project's rows at or below the anchor, newest first. */
export const auditPage = (db: Db, projectId: string, anchor: number, offset: number, limit: number) =>
  db
    .prepare('SELECT * FROM acct_audit WHERE project_id = ? AND seq <= ? ORDER BY seq DESC LIMIT ? OFFSET ?')
    .all(projectId, anchor, limit, offset) as AuditRow[];
