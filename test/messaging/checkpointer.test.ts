import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/daemon/store/db.js';
import { startCheckpointer } from '../../src/daemon/store/checkpointer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function freshDb(): { db: Db; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ckpt-'));
  dirs.push(dir);
  const file = join(dir, 'state.db');
  const db = openDb(file);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)');
  return { db, file };
}

const write = (db: Db, rows: number) => {
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  const batch = db.transaction(() => {
    for (let i = 0; i < 100; i++) ins.run(Buffer.alloc(200, i));
  });
  for (let k = 0; k < rows / 100; k++) batch();
};

const until = async (cond: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('WAL checkpoints in a worker thread (store/checkpointer.ts)', () => {
  it('the connection stops auto-checkpointing and the worker moves the WAL into the database file', async () => {
    const { db, file } = freshDb();
    const ck = startCheckpointer(db, { intervalMs: 10 });
    expect(ck).toBeDefined();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = statSync(file).size;
    write(db, 5_000); // ~1 MB of rows: only a checkpoint grows the database file
    await until(() => statSync(file).size > before + 500_000);
    expect((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n).toBe(5_000);
    await ck!.stop();
    // Stopped: SQLite's own auto-checkpoint is back.
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    db.close();
  });

  it('without the worker (interval 0) the database file does not grow while the WAL does, as a control', async () => {
    const { db, file } = freshDb();
    expect(startCheckpointer(db, { intervalMs: 0 })).toBeUndefined();
    db.pragma('wal_autocheckpoint = 0');
    const before = statSync(file).size;
    write(db, 5_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(statSync(file).size).toBe(before);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(500_000);
    db.close();
  });
});
