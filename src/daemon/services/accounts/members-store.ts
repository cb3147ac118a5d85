import type { Db } from '../../store/db.js';
import { newId } from '../../ids.js';
import type { GrantRole } from './access.js';

/** SQL for project grants (spec 1 §4.6, §4.7); rules live in members.ts and break-glass.ts. */

export interface MemberRow {
  id: string;
  project_id: string;
  user_id: string | null;
  service_account_id: string | null;
  role: GrantRole;
  break_glass: number;
  expires_at: string | null;
  reason: string | null;
  granted_by: string | null;
  created_at: string;
  /** Joined: the user's e-mail, or the service account's name and its project's short. */
  email: string | null;
  org_id: string | null;
  sa_name: string | null;
  project_short: string;
}

const SELECT = `SELECT m.*, u.email, u.org_id, sa.name AS sa_name, p.short AS project_short
  FROM acct_project_members m
  JOIN acct_projects p ON p.id = m.project_id
  LEFT JOIN acct_users u ON u.id = m.user_id
  LEFT JOIN acct_service_accounts sa ON sa.id = m.service_account_id`;

// Grants of soft-deleted service accounts are not memberships any more.
const LIVE = `(m.service_account_id IS NULL OR sa.deleted_at IS NULL)`;

/** Members in grant order; created_at then id is immutable, so offsets page stably. */
export const listMembers = (db: Db, projectId: string, limit: number, offset: number) =>
  db.prepare(`${SELECT} WHERE m.project_id = ? AND ${LIVE} ORDER BY m.created_at, m.id LIMIT ? OFFSET ?`).all(projectId, limit, offset) as MemberRow[];

export const memberById = (db: Db, id: string) => db.prepare(`${SELECT} WHERE m.id = ?`).get(id) as MemberRow | undefined;

/** The direct (non-break-glass) grant of a user. */
export const directGrant = (db: Db, projectId: string, userId: string) =>
  db.prepare(`${SELECT} WHERE m.project_id = ? AND m.user_id = ? AND m.break_glass = 0`).get(projectId, userId) as MemberRow | undefined;

/** Break-glass grants of a user that have not expired yet. */
export const liveBreakGlass = (db: Db, projectId: string, userId: string, nowIso: string) =>
  db.prepare(`${SELECT} WHERE m.project_id = ? AND m.user_id = ? AND m.break_glass = 1 AND m.expires_at > ?`).all(projectId, userId, nowIso) as MemberRow[];

export const serviceAccountGrant = (db: Db, projectId: string, saId: string) =>
  db.prepare(`${SELECT} WHERE m.project_id = ? AND m.service_account_id = ? AND sa.deleted_at IS NULL`).get(projectId, saId) as MemberRow | undefined;

export function insertMemberRow(
  db: Db,
  g: { projectId: string; userId: string; role: GrantRole; createdAt: string; breakGlass?: { expiresAt: string; reason: string; grantedBy: string } },
): string {
  const id = newId();
  db.prepare(
    `INSERT INTO acct_project_members (id, project_id, user_id, role, break_glass, expires_at, reason, granted_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(id, g.projectId, g.userId, g.role, g.breakGlass ? 1 : 0, g.breakGlass?.expiresAt ?? null, g.breakGlass?.reason ?? null, g.breakGlass?.grantedBy ?? null, g.createdAt);
  return id;
}

export const setMemberRole = (db: Db, id: string, role: GrantRole) => db.prepare('UPDATE acct_project_members SET role = ? WHERE id = ?').run(role, id);
export const deleteMemberRow = (db: Db, id: string) => db.prepare('DELETE FROM acct_project_members WHERE id = ?').run(id);

/** Ends a break-glass grant now; the row stays as visible history with expired true. */
export const expireMemberRow = (db: Db, id: string, nowIso: string) =>
  db.prepare('UPDATE acct_project_members SET expires_at = ? WHERE id = ?').run(nowIso, id);

/** Real admins: direct user grants only (break-glass, expired and service-account admins do not count). */
export const countRealAdmins = (db: Db, projectId: string) =>
  (
    db
      .prepare(`SELECT COUNT(*) AS n FROM acct_project_members WHERE project_id = ? AND role = 'admin' AND break_glass = 0 AND user_id IS NOT NULL`)
      .get(projectId) as { n: number }
  ).n;
