import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { migrate } from '../../src/daemon/store/db.js';
import { messagingMigrations } from '../../src/daemon/services/messaging/migrations.js';

describe('messaging migrations', () => {
  it('a database at version 1 upgrades: pending rows keep their data and lose topic_id, the seq index goes, the visibility index carries the attempt', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE schema_migrations (area TEXT NOT NULL, version INTEGER NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (area, version));
             CREATE TABLE acct_projects (id TEXT PRIMARY KEY)`);
    migrate(db, 'messaging', messagingMigrations.slice(0, 1));
    db.exec(`INSERT INTO msg_pending (sub_id, seq, topic_id, size, key, attempt, visible_at) VALUES (1, 1, 7, 10, 'k', 2, 99), (1, 2, 7, 5, NULL, 0, 0)`);
    migrate(db, 'messaging', messagingMigrations);
    const cols = (db.prepare('PRAGMA table_info(msg_pending)').all() as { name: string }[]).map((c) => c.name);
    expect(cols).not.toContain('topic_id');
    const indexes = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'msg_pending'`).all() as { name: string }[]).map((r) => r.name);
    expect(indexes.sort()).toEqual(['msg_pending_visible']);
    const visibleCols = (db.prepare(`PRAGMA index_info('msg_pending_visible')`).all() as { name: string }[]).map((c) => c.name);
    expect(visibleCols).toEqual(['sub_id', 'visible_at', 'seq', 'attempt']);
    // The pull query reads its pending rows from the index alone.
    const plan = (db.prepare(`EXPLAIN QUERY PLAN SELECT seq, attempt FROM msg_pending INDEXED BY msg_pending_visible WHERE sub_id = 1 AND visible_at = 0 AND seq > 0 ORDER BY seq LIMIT 10`).all() as { detail: string }[]).map((r) => r.detail).join(' ');
    expect(plan).toContain('COVERING INDEX msg_pending_visible');
    expect(db.prepare('SELECT sub_id, seq, size, key, attempt, visible_at FROM msg_pending ORDER BY seq').all()).toEqual([
      { sub_id: 1, seq: 1, size: 10, key: 'k', attempt: 2, visible_at: 99 },
      { sub_id: 1, seq: 2, size: 5, key: null, attempt: 0, visible_at: 0 },
    ]);
    expect((db.prepare(`SELECT MAX(version) AS v FROM schema_migrations WHERE area = 'messaging'`).get() as { v: number }).v).toBe(messagingMigrations.length);
  });
});
