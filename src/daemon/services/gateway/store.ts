import type { AuthSettings, GatewayTargetKind, RateLimit } from '../../../api/gateway.js';
import { stmt, type Db } from '../../store/db.js';

export interface EndpointRow {
  id: string;
  project_id: string;
  name: string;
  target_kind: GatewayTargetKind;
  target_name: string;
  hostname: string;
  auth: string;
  ip_allowlist: string;
  rate_limit: string | null;
  published: number;
  credential_sealed: string;
  created_at: string;
  updated_at: string;
}

export interface KeyRow {
  id: string;
  endpoint_id: string;
  key_id: string;
  secret_hash: string;
  note: string;
  created_at: string;
  expires_at: string | null;
  superseded_until: string | null;
  revoked_at: string | null;
}

export interface DomainRow {
  hostname: string;
  project_id: string;
  note: string;
  verified_at: string | null;
  checked_at: string | null;
  created_at: string;
}

export const authOf = (e: EndpointRow) => JSON.parse(e.auth) as AuthSettings;
export const allowlistOf = (e: EndpointRow) => JSON.parse(e.ip_allowlist) as string[];
export const rateLimitOf = (e: EndpointRow) => (e.rate_limit ? (JSON.parse(e.rate_limit) as RateLimit) : undefined);

export const gatewayStore = {
  byName: (db: Db, projectId: string, name: string) =>
    stmt(db, 'SELECT * FROM gw_endpoints WHERE project_id = ? AND name = ?').get(projectId, name) as EndpointRow | undefined,
  byId: (db: Db, id: string) => stmt(db, 'SELECT * FROM gw_endpoints WHERE id = ?').get(id) as EndpointRow | undefined,
  byHostname: (db: Db, hostname: string) => stmt(db, "SELECT * FROM gw_endpoints WHERE hostname = ? AND hostname != ''").all(hostname) as EndpointRow[],
  list: (db: Db, projectId: string, limit: number, offset: number) =>
    stmt(db, 'SELECT * FROM gw_endpoints WHERE project_id = ? ORDER BY name LIMIT ? OFFSET ?').all(projectId, limit, offset) as EndpointRow[],
  countInProject: (db: Db, projectId: string) => (stmt(db, 'SELECT COUNT(*) AS n FROM gw_endpoints WHERE project_id = ?').get(projectId) as { n: number }).n,
  insert: (db: Db, e: EndpointRow) =>
    void stmt(
      db,
      `INSERT INTO gw_endpoints (id, project_id, name, target_kind, target_name, hostname, auth, ip_allowlist, rate_limit, published, credential_sealed, created_at, updated_at)
       VALUES (@id, @project_id, @name, @target_kind, @target_name, @hostname, @auth, @ip_allowlist, @rate_limit, @published, @credential_sealed, @created_at, @updated_at)`,
    ).run(e),
  update: (db: Db, e: EndpointRow) =>
    void stmt(
      db,
      `UPDATE gw_endpoints SET target_kind = @target_kind, target_name = @target_name, hostname = @hostname, auth = @auth, ip_allowlist = @ip_allowlist,
       rate_limit = @rate_limit, published = @published, credential_sealed = @credential_sealed, updated_at = @updated_at WHERE id = @id`,
    ).run(e),
  remove: (db: Db, id: string) => void stmt(db, 'DELETE FROM gw_endpoints WHERE id = ?').run(id),

  keys: (db: Db, endpointId: string) => stmt(db, 'SELECT * FROM gw_keys WHERE endpoint_id = ? ORDER BY created_at, key_id').all(endpointId) as KeyRow[],
  key: (db: Db, endpointId: string, keyId: string) => stmt(db, 'SELECT * FROM gw_keys WHERE endpoint_id = ? AND key_id = ?').get(endpointId, keyId) as KeyRow | undefined,
  keyById: (db: Db, keyId: string) => stmt(db, 'SELECT * FROM gw_keys WHERE key_id = ?').get(keyId) as KeyRow | undefined,
  insertKey: (db: Db, k: KeyRow) =>
    void stmt(
      db,
      `INSERT INTO gw_keys (id, endpoint_id, key_id, secret_hash, note, created_at, expires_at, superseded_until, revoked_at)
       VALUES (@id, @endpoint_id, @key_id, @secret_hash, @note, @created_at, @expires_at, @superseded_until, @revoked_at)`,
    ).run(k),
  supersede: (db: Db, id: string, until: string) => void stmt(db, 'UPDATE gw_keys SET superseded_until = ? WHERE id = ?').run(until, id),
  revokeKey: (db: Db, id: string, at: string) => void stmt(db, 'UPDATE gw_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id),
  revokeAll: (db: Db, endpointId: string, at: string) => void stmt(db, 'UPDATE gw_keys SET revoked_at = ? WHERE endpoint_id = ? AND revoked_at IS NULL').run(at, endpointId),

  domain: (db: Db, hostname: string) => stmt(db, 'SELECT * FROM gw_domains WHERE hostname = ?').get(hostname) as DomainRow | undefined,
  domains: (db: Db, projectId: string, limit: number, offset: number) =>
    stmt(db, 'SELECT * FROM gw_domains WHERE project_id = ? ORDER BY hostname LIMIT ? OFFSET ?').all(projectId, limit, offset) as DomainRow[],
  unverified: (db: Db) => stmt(db, 'SELECT * FROM gw_domains WHERE verified_at IS NULL ORDER BY created_at').all() as DomainRow[],
  insertDomain: (db: Db, d: DomainRow) =>
    void stmt(db, 'INSERT INTO gw_domains (hostname, project_id, note, verified_at, checked_at, created_at) VALUES (@hostname, @project_id, @note, @verified_at, @checked_at, @created_at)').run(d),
  markChecked: (db: Db, hostname: string, at: string, verified: boolean) =>
    void stmt(db, `UPDATE gw_domains SET checked_at = ?, verified_at = CASE WHEN ? THEN ? ELSE verified_at END WHERE hostname = ?`).run(at, verified ? 1 : 0, at, hostname),
  removeDomain: (db: Db, hostname: string) => void stmt(db, 'DELETE FROM gw_domains WHERE hostname = ?').run(hostname),
  publishedOn: (db: Db, projectId: string, hostname: string) =>
    stmt(db, 'SELECT name FROM gw_endpoints WHERE project_id = ? AND hostname = ? AND published = 1').all(projectId, hostname) as Array<{ name: string }>,
  usersOf: (db: Db, projectId: string, hostname: string) =>
    stmt(db, 'SELECT name FROM gw_endpoints WHERE project_id = ? AND hostname = ?').all(projectId, hostname) as Array<{ name: string }>,
};
