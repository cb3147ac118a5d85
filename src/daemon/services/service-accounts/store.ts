import type { Db } from '../../store/db.js';
import type { KeyRow } from '../auth/store.js';

export interface ServiceAccountRow {
  id: string;
  project_id: string;
  name: string;
  display_name: string;
  disabled: number;
  deleted_at: string | null;
  created_at: string;
  /** The account's project grant, joined in; null when it holds none. */
  role: 'admin' | 'member' | null;
}

const SELECT = `SELECT sa.*, m.role AS role FROM acct_service_accounts sa
  LEFT JOIN acct_project_members m ON m.service_account_id = sa.id AND m.project_id = sa.project_id`;

/** Finds an account of the project by id or name, deleted ones included (their names stay reserved). */
export const serviceAccountByRef = (db: Db, projectId: string, ref: string) =>
  db.prepare(`${SELECT} WHERE sa.project_id = ? AND (sa.id = ? OR sa.name = ?)`).get(projectId, ref, ref) as ServiceAccountRow | undefined;

/** Live (not deleted) accounts of a project by name. */
export const serviceAccountPage = (db: Db, projectId: string, offset: number, limit: number) =>
  db
    .prepare(`${SELECT} WHERE sa.project_id = ? AND sa.deleted_at IS NULL ORDER BY sa.name LIMIT ? OFFSET ?`)
    .all(projectId, limit, offset) as ServiceAccountRow[];

export const nameTaken = (db: Db, projectId: string, name: string) =>
  Boolean(db.prepare('SELECT 1 FROM acct_service_accounts WHERE project_id = ? AND name = ?').get(projectId, name));

export function insertServiceAccount(
  db: Db,
  sa: { id: string; projectId: string; name: string; displayName: string; role: string; createdAt: string; grantId: string; grantedBy: string },
): void {
  db.prepare('INSERT INTO acct_service_accounts (id, project_id, name, display_name, created_at) VALUES (?, ?, ?, ?, ?)').run(
    sa.id,
    sa.projectId,
    sa.name,
    sa.displayName,
    sa.createdAt,
  );
  db.prepare(
    'INSERT INTO acct_project_members (id, project_id, service_account_id, role, granted_by, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(sa.grantId, sa.projectId, sa.id, sa.role, sa.grantedBy, sa.createdAt);
}

/** Soft delete: the row (and so the name) stays; the grant goes; every live key is revoked. Returns keys revoked. */
export function softDeleteServiceAccount(db: Db, id: string, at: string): number {
  db.prepare('UPDATE acct_service_accounts SET deleted_at = ?, disabled = 1 WHERE id = ?').run(at, id);
  db.prepare('DELETE FROM acct_project_members WHERE service_account_id = ?').run(id);
  return db
    .prepare(`UPDATE acct_api_keys SET revoked_at = ? WHERE kind = 'service_account' AND service_account_id = ? AND revoked_at IS NULL`)
    .run(at, id).changes;
}

export const newestKeyRowid = (db: Db, saId: string) =>
  (db.prepare(`SELECT COALESCE(MAX(rowid), 0) AS r FROM acct_api_keys WHERE kind = 'service_account' AND service_account_id = ?`).get(saId) as { r: number }).r;

/** A page of the account's keys at or below the anchor, newest first (rowid follows creation). */
export const serviceAccountKeyPage = (db: Db, saId: string, anchor: number, offset: number, limit: number) =>
  db
    .prepare(
      `SELECT * FROM acct_api_keys WHERE kind = 'service_account' AND service_account_id = ? AND rowid <= ? ORDER BY rowid DESC LIMIT ? OFFSET ?`,
    )
    .all(saId, anchor, limit, offset) as KeyRow[];
