import Database from 'better-sqlite3';
import { sqliteAddonPath } from './sqlite-addon.js';

export type Db = Database.Database;

/**
 * Opens the daemon's SQLite database. WAL with synchronous=NORMAL keeps every committed
 * transaction across a process crash (kill -9): the WAL is written before commit returns and
 * only a power loss can drop the last commits. busy_timeout covers the CLI reading the same file.
 */
export function openDb(file: string): Db {
  const db = new Database(file, { nativeBinding: sqliteAddonPath() });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    area TEXT NOT NULL, version INTEGER NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (area, version))`);
  return db;
}

/**
 * Applies an area's migrations in order. Each area numbers its own, so areas can be added
 * independently; every migration runs in its own transaction with its bookkeeping row.
 */
export function migrate(db: Db, area: string, migrations: readonly string[]): void {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations WHERE area = ?').get(area) as { v: number | null };
  const done = row.v ?? 0;
  migrations.forEach((sql, i) => {
    const version = i + 1;
    if (version <= done) return;
    db.transaction(() => {
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (area, version, applied_at) VALUES (?, ?, ?)').run(
        area,
        version,
        new Date().toISOString(),
      );
    })();
  });
}

/** Runs fn in a transaction (immediate, so read-then-write sequences cannot interleave). */
export function tx<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

const statements = new WeakMap<Db, Map<string, Database.Statement>>();

/**
 * A prepared statement cached per database by its SQL text, for per-request hot paths (preparing
 * the same SQL on every request cost about 6 % of the daemon's CPU under a messaging load).
 * Callers must not switch a cached statement's mode (pluck, raw, expand) and must pass SQL that
 * does not vary per call.
 */
export function stmt(db: Db, sql: string): Database.Statement {
  let byDb = statements.get(db);
  if (!byDb) statements.set(db, (byDb = new Map()));
  let s = byDb.get(sql);
  if (!s) byDb.set(sql, (s = db.prepare(sql)));
  return s;
}
