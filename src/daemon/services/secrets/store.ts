import type { Db } from '../../store/db.js';

/** SQL of the secrets area; knows nothing of HTTP, roles or encryption. */

export interface SecretRow {
  project_id: string;
  name: string;
  current_version: number;
  live: number;
  created_at: string;
  updated_at: string;
}
export interface VersionRow {
  version: number;
  ciphertext: Buffer | null;
  created_at: string;
  destroyed_at: string | null;
}
export interface TokenRow {
  hash: string;
  project_id: string;
  secret_name: string | null;
  expires_at: number;
  created_at: string;
}
export interface BindingRow {
  id: string;
  project_id: string;
  agent_id: string;
  agent: string;
  env_name: string;
  secret_name: string;
  version: number | null;
  created_at: string;
  updated_at: string;
}

export const getMeta = (db: Db, k: string) => (db.prepare('SELECT v FROM sec_meta WHERE k = ?').get(k) as { v: string } | undefined)?.v;
export const setMeta = (db: Db, k: string, v: string) => void db.prepare('INSERT OR REPLACE INTO sec_meta (k, v) VALUES (?, ?)').run(k, v);
export const hasAnyCiphertext = (db: Db) => Boolean(db.prepare('SELECT 1 FROM sec_versions WHERE ciphertext IS NOT NULL LIMIT 1').get());

/** A secret row, live or deleted (deleted rows keep the version counter). */
export const secretRow = (db: Db, projectId: string, name: string) =>
  db.prepare('SELECT * FROM sec_secrets WHERE project_id = ? AND name = ?').get(projectId, name) as SecretRow | undefined;

export function liveSecret(db: Db, projectId: string, name: string): SecretRow | undefined {
  const row = secretRow(db, projectId, name);
  return row?.live ? row : undefined;
}

/** Live secrets by name, skipping `hidden`; fetched with limit + 1 for the pager. */
export const listSecrets = (db: Db, projectId: string, hidden: string, limit: number, offset: number) =>
  db
    .prepare('SELECT * FROM sec_secrets WHERE project_id = ? AND live = 1 AND name <> ? ORDER BY name LIMIT ? OFFSET ?')
    .all(projectId, hidden, limit, offset) as SecretRow[];

export const versions = (db: Db, projectId: string, name: string) =>
  db.prepare('SELECT version, ciphertext, created_at, destroyed_at FROM sec_versions WHERE project_id = ? AND name = ? ORDER BY version').all(projectId, name) as VersionRow[];

export const version = (db: Db, projectId: string, name: string, v: number) =>
  db
    .prepare('SELECT version, ciphertext, created_at, destroyed_at FROM sec_versions WHERE project_id = ? AND name = ? AND version = ?')
    .get(projectId, name, v) as VersionRow | undefined;

/** Stores the next version; returns it and whether the secret was (re)created by this write. */
export function addVersion(db: Db, projectId: string, name: string, seal: (version: number) => Buffer, now: string): { version: number; created: boolean } {
  const row = secretRow(db, projectId, name);
  const next = (row?.current_version ?? 0) + 1;
  if (!row) {
    db.prepare('INSERT INTO sec_secrets (project_id, name, current_version, live, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)').run(projectId, name, next, now, now);
  } else if (!row.live) {
    db.prepare('UPDATE sec_secrets SET current_version = ?, live = 1, created_at = ?, updated_at = ? WHERE project_id = ? AND name = ?').run(next, now, now, projectId, name);
  } else {
    db.prepare('UPDATE sec_secrets SET current_version = ?, updated_at = ? WHERE project_id = ? AND name = ?').run(next, now, projectId, name);
  }
  db.prepare('INSERT INTO sec_versions (project_id, name, version, ciphertext, created_at) VALUES (?, ?, ?, ?, ?)').run(projectId, name, next, seal(next), now);
  return { version: next, created: !row?.live };
}

/** Destroys every version (ciphertext erased) and hides the secret; its tokens die with it. */
export function destroySecret(db: Db, projectId: string, name: string, now: string): void {
  db.prepare('UPDATE sec_versions SET ciphertext = NULL, destroyed_at = COALESCE(destroyed_at, ?) WHERE project_id = ? AND name = ?').run(now, projectId, name);
  db.prepare('UPDATE sec_secrets SET live = 0, updated_at = ? WHERE project_id = ? AND name = ?').run(now, projectId, name);
  db.prepare('DELETE FROM sec_tokens WHERE project_id = ? AND secret_name = ?').run(projectId, name);
}

export const countLive = (db: Db, projectId: string) =>
  (db.prepare('SELECT COUNT(*) AS n FROM sec_secrets WHERE project_id = ? AND live = 1').get(projectId) as { n: number }).n;

export function insertToken(db: Db, t: TokenRow & { actor: string }, nowMs: number): void {
  // Expired tokens are dead weight: drop them whenever a new one is minted.
  db.prepare('DELETE FROM sec_tokens WHERE expires_at <= ?').run(nowMs);
  db.prepare('INSERT INTO sec_tokens (hash, project_id, secret_name, expires_at, created_at, actor) VALUES (?, ?, ?, ?, ?, ?)').run(
    t.hash, t.project_id, t.secret_name, t.expires_at, t.created_at, t.actor,
  );
}

export const setTokenExpiry = (db: Db, hash: string, expiresAt: number) =>
  void db.prepare('UPDATE sec_tokens SET expires_at = ? WHERE hash = ?').run(expiresAt, hash);

export const tokenByHash = (db: Db, hash: string) => db.prepare('SELECT * FROM sec_tokens WHERE hash = ?').get(hash) as TokenRow | undefined;

export const bindingsForSecret = (db: Db, projectId: string, name: string) =>
  db.prepare('SELECT * FROM sec_bindings WHERE project_id = ? AND secret_name = ? ORDER BY agent, env_name').all(projectId, name) as BindingRow[];

export const bindingsForAgent = (db: Db, projectId: string, agent: string) =>
  db.prepare('SELECT * FROM sec_bindings WHERE project_id = ? AND agent = ? ORDER BY env_name').all(projectId, agent) as BindingRow[];

export const listBindings = (db: Db, projectId: string, limit: number, offset: number) =>
  db.prepare('SELECT * FROM sec_bindings WHERE project_id = ? ORDER BY agent, env_name, id LIMIT ? OFFSET ?').all(projectId, limit, offset) as BindingRow[];

export const binding = (db: Db, projectId: string, agent: string, envName: string) =>
  db.prepare('SELECT * FROM sec_bindings WHERE project_id = ? AND agent = ? AND env_name = ?').get(projectId, agent, envName) as BindingRow | undefined;

/** Creates or repoints a binding; keeps its id and created_at when it already existed. */
export function upsertBinding(db: Db, b: BindingRow): BindingRow {
  db.prepare(
    `INSERT INTO sec_bindings (id, project_id, agent_id, agent, env_name, secret_name, version, created_at, updated_at)
     VALUES (@id, @project_id, @agent_id, @agent, @env_name, @secret_name, @version, @created_at, @updated_at)
     ON CONFLICT (project_id, agent, env_name) DO UPDATE SET
       agent_id = excluded.agent_id, secret_name = excluded.secret_name, version = excluded.version, updated_at = excluded.updated_at`,
  ).run(b);
  return binding(db, b.project_id, b.agent, b.env_name)!;
}

export const deleteBinding = (db: Db, id: string) => db.prepare('DELETE FROM sec_bindings WHERE id = ?').run(id).changes > 0;
