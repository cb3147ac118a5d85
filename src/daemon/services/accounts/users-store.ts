import type { Db } from '../../store/db.js';
import type { UserRow } from '../auth/store.js';
import type { ProjectRow } from './access.js';

/** SQL for accounts (spec 1 §4.3); rules live in users.ts. */

export const listUsers = (db: Db, limit: number, offset: number) =>
  db.prepare('SELECT * FROM acct_users ORDER BY email LIMIT ? OFFSET ?').all(limit, offset) as UserRow[];

export function insertUser(
  db: Db,
  u: { id: string; email: string; hash: string; role: 'admin' | 'user'; orgId: string | null; createdAt: string },
): void {
  db.prepare(
    'INSERT INTO acct_users (id, email, password_hash, role, must_change_password, org_id, created_at) VALUES (?, ?, ?, ?, 1, ?, ?)',
  ).run(u.id, u.email, u.hash, u.role, u.orgId, u.createdAt);
}

export const setUserRole = (db: Db, id: string, role: 'admin' | 'user') =>
  db.prepare('UPDATE acct_users SET role = ? WHERE id = ?').run(role, id);

/** Deleting the row removes org memberships, project grants and personal keys (ON DELETE CASCADE). */
export const deleteUser = (db: Db, id: string) => db.prepare('DELETE FROM acct_users WHERE id = ?').run(id);

export const countPlatformAdmins = (db: Db) =>
  (db.prepare(`SELECT COUNT(*) AS n FROM acct_users WHERE role = 'admin'`).get() as { n: number }).n;

/**
 * Projects a user reaches: direct grants, live break-glass grants and every project of an org
 * the user administers (inherited live, spec 1 §4.4). Returned as id and slug, sorted by slug.
 */
export function projectsOfUser(db: Db, userId: string, nowIso: string): ProjectRow[] {
  return db
    .prepare(
      `SELECT * FROM acct_projects WHERE id IN (
         SELECT project_id FROM acct_project_members
          WHERE user_id = ? AND (break_glass = 0 OR expires_at > ?)
         UNION
         SELECT p.id FROM acct_projects p JOIN acct_org_members m ON m.org_id = p.org_id
          WHERE m.user_id = ? AND m.role = 'admin')
       ORDER BY slug`,
    )
    .all(userId, nowIso, userId) as ProjectRow[];
}

/** Is the user an admin of any organization? Of this one? */
export const orgAdminOf = (db: Db, userId: string, orgId?: string) =>
  orgId
    ? Boolean(db.prepare(`SELECT 1 FROM acct_org_members WHERE user_id = ? AND org_id = ? AND role = 'admin'`).get(userId, orgId))
    : Boolean(db.prepare(`SELECT 1 FROM acct_org_members WHERE user_id = ? AND role = 'admin'`).get(userId));

/** Does the user hold a direct admin grant on some project of the given organization? */
export const projectAdminIn = (db: Db, userId: string, orgId: string) =>
  Boolean(
    db
      .prepare(
        `SELECT 1 FROM acct_project_members m JOIN acct_projects p ON p.id = m.project_id
         WHERE m.user_id = ? AND m.role = 'admin' AND m.break_glass = 0 AND p.org_id = ?`,
      )
      .get(userId, orgId),
  );

export const projectAdminAnywhere = (db: Db, userId: string) =>
  Boolean(db.prepare(`SELECT 1 FROM acct_project_members WHERE user_id = ? AND role = 'admin' AND break_glass = 0`).get(userId));

/**
 * Projects where the user is a real admin (direct non-break-glass admin grant, or admin of the
 * project's org) and no other real admin would remain without them: deleting the account would
 * leave these projects with no one to administer them.
 */
export function projectsOnlyAdministeredBy(db: Db, userId: string): { id: string; slug: string }[] {
  return db
    .prepare(
      `SELECT p.id, p.slug FROM acct_projects p
        WHERE (EXISTS (SELECT 1 FROM acct_project_members m
                        WHERE m.project_id = p.id AND m.user_id = ? AND m.role = 'admin' AND m.break_glass = 0)
               OR EXISTS (SELECT 1 FROM acct_org_members o WHERE o.org_id = p.org_id AND o.user_id = ? AND o.role = 'admin'))
          AND NOT EXISTS (SELECT 1 FROM acct_project_members m
                           WHERE m.project_id = p.id AND m.role = 'admin' AND m.break_glass = 0
                             AND m.user_id IS NOT NULL AND m.user_id <> ?)
          AND NOT EXISTS (SELECT 1 FROM acct_org_members o WHERE o.org_id = p.org_id AND o.role = 'admin' AND o.user_id <> ?)
        ORDER BY p.slug`,
    )
    .all(userId, userId, userId, userId) as { id: string; slug: string }[];
}
