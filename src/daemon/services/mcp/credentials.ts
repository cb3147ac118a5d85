import { randomBytes, timingSafeEqual } from 'node:crypto';
import { openText, sealText } from '../../crypto/sealed.js';
import type { Db } from '../../store/db.js';
import type { ServerRow } from './store.js';

/**
 * A server's two secrets: its bearer (spec 2 §2.2: svc_mcp_ + 64 hex, minted once per server,
 * reused across versions, never returned by any API) and its workload key (SVC_PROJECT_KEY, for
 * credential fetches). Both are sealed with the daemon's master key like secret values; the
 * additional data binds each blob to its server, so a blob copied onto another row does not open.
 */
export const mintBearer = () => `svc_mcp_${randomBytes(32).toString('hex')}`;

const bearerAad = (serverId: string) => `mcp:bearer:${serverId}`;
const keyAad = (serverId: string) => `mcp:workload-key:${serverId}`;

export const sealBearer = (db: Db, serverId: string, bearer: string) => sealText(db, bearer, bearerAad(serverId));
export const sealWorkloadKey = (db: Db, serverId: string, key: string) => sealText(db, key, keyAad(serverId));

/**
 * Opened bearers, per database and server: the protocol endpoint checks one on every request
 * and opening re-reads the master key file. A bearer never changes, so the cache never goes stale;
 * a deleted server's entry is dropped with it.
 */
const opened = new WeakMap<Db, Map<string, Buffer>>();

export function bearerOf(db: Db, s: ServerRow): string {
  return bearerBytes(db, s).toString('utf8');
}

function bearerBytes(db: Db, s: ServerRow): Buffer {
  let byDb = opened.get(db);
  if (!byDb) opened.set(db, (byDb = new Map()));
  let b = byDb.get(s.id);
  if (!b) byDb.set(s.id, (b = Buffer.from(openText(db, s.bearer_sealed, bearerAad(s.id)), 'utf8')));
  return b;
}

export const forgetBearer = (db: Db, serverId: string) => void opened.get(db)?.delete(serverId);

export const workloadKeyOf = (db: Db, s: ServerRow) => openText(db, s.workload_key_sealed, keyAad(s.id));

/** Constant-time check of an Authorization header against the server's bearer. */
export function bearerMatches(db: Db, s: ServerRow, authorization: string | undefined): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) return false;
  const got = Buffer.from(m[1]!, 'utf8');
  const want = bearerBytes(db, s);
  return got.length === want.length && timingSafeEqual(got, want);
}
