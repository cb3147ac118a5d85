import type { Db } from '../../store/db.js';

export interface InvitationRow {
  rowid: number;
  id: string;
  project_id: string;
  email: string;
  role: 'admin' | 'member';
  token_hash: string;
  state: 'open' | 'accepted' | 'revoked' | 'expired';
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
}

export interface AccountRow {
  id: string;
  email: string;
  org_id: string | null;
}

const COLS = 'rowid, *';

export function insertInvitation(
  db: Db,
  i: { id: string; projectId: string; email: string; role: string; tokenHash: string; invitedBy: string; createdAt: string; expiresAt: string },
): void {
  db.prepare(
    `INSERT INTO acct_invitations (id, project_id, email, role, token_hash, state, invited_by, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, 'open', ?, ?, ?)`,
  ).run(i.id, i.projectId, i.email, i.role, i.tokenHash, i.invitedBy, i.createdAt, i.expiresAt);
}

export const invitationById = (db: Db, projectId: string, id: string) =>
  db.prepare(`SELECT ${COLS} FROM acct_invitations WHERE project_id = ? AND id = ?`).get(projectId, id) as InvitationRow | undefined;

export const invitationByTokenHash = (db: Db, hash: string) =>
  db.prepare(`SELECT ${COLS} FROM acct_invitations WHERE token_hash = ?`).get(hash) as InvitationRow | undefined;

/** Open (not yet moved) invitations for one e-mail in one project; expiry is checked by the caller. */
export const openInvitationsFor = (db: Db, projectId: string, email: string) =>
  db
    .prepare(`SELECT ${COLS} FROM acct_invitations WHERE project_id = ? AND email = ? AND state = 'open'`)
    .all(projectId, email) as InvitationRow[];

export const newestInvitationRowid = (db: Db, projectId: string) =>
  (db.prepare('SELECT COALESCE(MAX(rowid), 0) AS r FROM acct_invitations WHERE project_id = ?').get(projectId) as { r: number }).r;

export const invitationPage = (db: Db, projectId: string, anchor: number, offset: number, limit: number) =>
  db
    .prepare(`SELECT ${COLS} FROM acct_invitations WHERE project_id = ? AND rowid <= ? ORDER BY rowid DESC LIMIT ? OFFSET ?`)
    .all(projectId, anchor, limit, offset) as InvitationRow[];

export function markRevoked(db: Db, id: string, at: string, by: string): void {
  db.prepare(`UPDATE acct_invitations SET state = 'revoked', revoked_at = ?, revoked_by = ? WHERE id = ?`).run(at, by, id);
}

export function markAccepted(db: Db, id: string, at: string): void {
  db.prepare(`UPDATE acct_invitations SET state = 'accepted', accepted_at = ? WHERE id = ?`).run(at, id);
}

export const accountByEmail = (db: Db, email: string) =>
  db.prepare('SELECT id, email, org_id FROM acct_users WHERE email = ?').get(email) as AccountRow | undefined;

/** An external account: no home organization (spec 1 §2.4), password chosen by its owner. */
export function insertExternalUser(db: Db, u: { id: string; email: string; passwordHash: string; createdAt: string }): void {
  db.prepare(
    `INSERT INTO acct_users (id, email, password_hash, role, must_change_password, org_id, created_at) VALUES (?, ?, ?, 'user', 0, NULL, ?)`,
  ).run(u.id, u.email, u.passwordHash, u.createdAt);
}

/** A standing (non-break-glass) grant of the user on the project, if any. */
export const memberGrant = (db: Db, projectId: string, userId: string) =>
  db
    .prepare('SELECT role, created_at FROM acct_project_members WHERE project_id = ? AND user_id = ? AND break_glass = 0')
    .get(projectId, userId) as { role: string; created_at: string } | undefined;

export function insertUserGrant(db: Db, g: { id: string; projectId: string; userId: string; role: string; grantedBy: string; createdAt: string }): void {
  db.prepare(
    'INSERT INTO acct_project_members (id, project_id, user_id, role, granted_by, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(g.id, g.projectId, g.userId, g.role, g.grantedBy, g.createdAt);
}
