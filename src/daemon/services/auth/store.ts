import type { Db } from '../../store/db.js';

export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  role: 'admin' | 'user';
  must_change_password: number;
  org_id: string | null;
  created_at: string;
}

export interface KeyRow {
  id: string;
  key_id: string;
  kind: 'personal' | 'service_account' | 'workload';
  user_id: string | null;
  service_account_id: string | null;
  project_id: string | null;
  workload: string | null;
  display_name: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  break_glass_grant_id: string | null;
}

export const userByEmail = (db: Db, email: string) =>
  db.prepare('SELECT * FROM acct_users WHERE email = ?').get(email.trim().toLowerCase()) as UserRow | undefined;

export const userById = (db: Db, id: string) => db.prepare('SELECT * FROM acct_users WHERE id = ?').get(id) as UserRow | undefined;

export function setPassword(db: Db, userId: string, hash: string, mustChange: boolean): void {
  db.prepare('UPDATE acct_users SET password_hash = ?, must_change_password = ? WHERE id = ?').run(hash, mustChange ? 1 : 0, userId);
}

export interface NewKey {
  id: string;
  keyId: string;
  hash: string;
  kind: KeyRow['kind'];
  userId?: string;
  serviceAccountId?: string;
  projectId?: string;
  workload?: string;
  displayName: string;
  createdAt: string;
  expiresAt?: string;
  breakGlassGrantId?: string;
}

export function insertKey(db: Db, k: NewKey): void {
  db.prepare(
    `INSERT INTO acct_api_keys (id, key_id, secret_hash, kind, user_id, service_account_id, project_id, workload, display_name, created_at, expires_at, break_glass_grant_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    k.id,
    k.keyId,
    k.hash,
    k.kind,
    k.userId ?? null,
    k.serviceAccountId ?? null,
    k.projectId ?? null,
    k.workload ?? null,
    k.displayName,
    k.createdAt,
    k.expiresAt ?? null,
    k.breakGlassGrantId ?? null,
  );
}

/** Revokes the keys minted under a break-glass grant when it ends early; returns their key ids. */
export function revokeKeysOfGrant(db: Db, grantId: string, at: string): string[] {
  const rows = db
    .prepare('SELECT id, key_id FROM acct_api_keys WHERE break_glass_grant_id = ? AND revoked_at IS NULL')
    .all(grantId) as { id: string; key_id: string }[];
  for (const r of rows) revokeKey(db, r.id, at);
  return rows.map((r) => r.key_id);
}

export const keysOfUser = (db: Db, userId: string) =>
  db.prepare(`SELECT * FROM acct_api_keys WHERE kind = 'personal' AND user_id = ? ORDER BY created_at DESC, key_id`).all(userId) as KeyRow[];

export const keysOfServiceAccount = (db: Db, saId: string) =>
  db.prepare(`SELECT * FROM acct_api_keys WHERE kind = 'service_account' AND service_account_id = ? ORDER BY created_at DESC, key_id`).all(
    saId,
  ) as KeyRow[];

/** Finds a key by its public key id or row id. */
export const keyByRef = (db: Db, ref: string) =>
  db.prepare('SELECT * FROM acct_api_keys WHERE key_id = ? OR id = ?').get(ref, ref) as KeyRow | undefined;

export function revokeKey(db: Db, id: string, at: string): void {
  db.prepare('UPDATE acct_api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(at, id);
}
