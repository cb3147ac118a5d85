import type { Db } from './db.js';

/**
 * SQLite's data_version of a connection (it moves when another connection commits to the file),
 * read at most once per request. The pragma is a read of the file with its locks, as costly as a
 * small query, and an invoke asked it three times (credentials, project and agent, turn and
 * instance). What a reader must see is every commit that happened before the request it serves
 * arrived (a commit after that is concurrent with the request): so the value read stands until
 * the next request begins (`requestBegan`, the first thing the daemon's request handler does)
 * and at most until the end of this turn of the event loop (for work that is not a request's).
 * This connection's own writes never wait for it: the triggers of TableChanges count them at once.
 */
class DataVersion {
  private readonly statement: { get(): unknown };
  private value: unknown;
  private fresh = false;
  private expiring = false;
  private readonly expire = () => {
    this.expiring = false;
    this.fresh = false;
  };

  constructor(db: Db) {
    this.statement = db.prepare('PRAGMA data_version').pluck();
    this.value = this.statement.get();
  }

  now(): unknown {
    if (!this.fresh) {
      this.fresh = true;
      if (!this.expiring) {
        this.expiring = true;
        setImmediate(this.expire);
      }
      this.value = this.statement.get();
    }
    return this.value;
  }

  /** A request arrived: whatever another process committed before it must be seen, so read again. */
  requestBegan(): void {
    this.fresh = false;
  }
}

const versions = new WeakMap<Db, DataVersion>();

/** Called by the request handler before anything of the request reads the store. */
export function requestBegan(db: Db): void {
  versions.get(db)?.requestBegan();
}

export function dataVersion(db: Db): DataVersion {
  let v = versions.get(db);
  if (!v) versions.set(db, (v = new DataVersion(db)));
  return v;
}

/**
 * A counter of writes to a set of tables, for caches of rows read on hot paths that must never
 * serve a row the table no longer holds. Temporary triggers on this connection bump it on every
 * INSERT, UPDATE and DELETE of the tables (whichever code path writes, so a path added later
 * cannot forget to invalidate), and data_version moves it when another connection commits to
 * the file. A cache keeps the counter it was filled at and is stale once it moved. A table may
 * name columns whose updates do not count (a last-used time written on every use).
 */
export class TableChanges {
  private generation = 0;
  private readonly version: DataVersion;
  private lastVersion: unknown;

  constructor(db: Db, tables: readonly string[] | Readonly<Record<string, { ignore?: readonly string[] }>>) {
    const fn = `platform_tables_changed_${++connectionSeq}`;
    db.function(fn, { deterministic: false, varargs: false }, () => {
      this.generation++;
      return null;
    });
    const watched: Array<[string, { ignore?: readonly string[] }]> = Array.isArray(tables) ? tables.map((t) => [t, {}]) : Object.entries(tables);
    for (const [table, { ignore = [] }] of watched) {
      const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
      if (!columns.length) throw new Error(`TableChanges: no table ${table} (migrations run first)`);
      const counted = columns.filter((c) => !ignore.includes(c));
      const of = ignore.length ? ` OF ${counted.map((c) => `"${c}"`).join(', ')}` : '';
      for (const op of ['INSERT', `UPDATE${of}`, 'DELETE']) {
        const name = `${fn}_${table}_${op.split(' ')[0]!.toLowerCase()}`;
        db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS ${name} AFTER ${op} ON main.${table} BEGIN SELECT ${fn}(); END`);
      }
    }
    this.version = dataVersion(db);
    this.lastVersion = this.version.now();
  }

  /** The counter now: any value other than the one a cache was filled at means "read again". */
  current(): number {
    const v = this.version.now();
    if (v !== this.lastVersion) {
      this.lastVersion = v;
      this.generation++;
    }
    return this.generation;
  }
}
let connectionSeq = 0;
