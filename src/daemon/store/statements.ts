import type Database from 'better-sqlite3';
import type { Db } from './db.js';

const caches = new WeakMap<Db, Map<string, Database.Statement>>();

/**
 * A prepared statement for constant SQL, compiled once per database. Preparing costs tens of
 * microseconds, which shows on hot paths (every invoke reads its agent); pass only fixed SQL
 * text here, never SQL built from varying parts, or the cache grows without bound.
 */
export function cached(db: Db, sql: string): Database.Statement {
  let m = caches.get(db);
  if (!m) caches.set(db, (m = new Map()));
  let s = m.get(sql);
  if (!s) m.set(sql, (s = db.prepare(sql)));
  return s;
}
