import { stmt, type Db } from '../../store/db.js';
import type { FIRING_STATUSES } from '../../../api/triggers.js';

export type TargetKind = 'service' | 'function' | 'agent';
export type FiringStatus = (typeof FIRING_STATUSES)[number];

export interface Retry {
  max_attempts: number;
  backoff: { initial_seconds: number; maximum_seconds: number; multiplier: number };
}
export interface StoredSource {
  schedule?: { cron: string; time_zone: string; payload?: string };
  pubsub?: { topic: string; subscription: string; owned: boolean };
  objectstore?: { bucket: string; prefix?: string };
}

export interface TriggerRow {
  id: string;
  project_id: string;
  name: string;
  target_service: string;
  target_path: string;
  target_kind: TargetKind;
  source_type: 'schedule' | 'pubsub' | 'objectstore';
  source: string;
  retry: string;
  next_fire_at: number | null;
  created_at: string;
  updated_at: string;
}

export interface FiringRow {
  id: number;
  trigger_id: string;
  event_key: string | null;
  scheduled_at: number;
  first_attempt_at: number | null;
  finished_at: number | null;
  attempts: number;
  status: FiringStatus;
  next_attempt_at: number | null;
  http_status: number | null;
  error: string;
  body: Buffer | null;
  object_key: string | null;
  catch_up: number;
  manual: number;
}

/**
 * History is pruned on every PRUNE_EVERY-th finished firing (by id), not on each, to keep a
 * delete off the path of most deliveries. A trigger keeps at most about historyLimit +
 * PRUNE_EVERY finished rows; GET shows the newest historyLimit.
 */
export const PRUNE_EVERY = 16;

export const sourceOf = (t: TriggerRow) => JSON.parse(t.source) as StoredSource;
export const retryOf = (t: TriggerRow) => JSON.parse(t.retry) as Retry;

const ACTIVE = "('pending','retrying','delivering')";

export const triggerStore = {
  byName: (db: Db, projectId: string, name: string) =>
    stmt(db, 'SELECT * FROM trg_triggers WHERE project_id = ? AND name = ?').get(projectId, name) as TriggerRow | undefined,
  byId: (db: Db, id: string) => stmt(db, 'SELECT * FROM trg_triggers WHERE id = ?').get(id) as TriggerRow | undefined,
  list: (db: Db, projectId: string, limit: number, offset: number) =>
    stmt(db, 'SELECT * FROM trg_triggers WHERE project_id = ? ORDER BY name LIMIT ? OFFSET ?').all(projectId, limit, offset) as TriggerRow[],
  bySource: (db: Db, type: TriggerRow['source_type']) => stmt(db, 'SELECT * FROM trg_triggers WHERE source_type = ?').all(type) as TriggerRow[],
  countInProject: (db: Db, projectId: string) => (stmt(db, 'SELECT COUNT(*) AS n FROM trg_triggers WHERE project_id = ?').get(projectId) as { n: number }).n,
  insert(db: Db, t: TriggerRow): void {
    stmt(
      db,
      `INSERT INTO trg_triggers (id, project_id, name, target_service, target_path, target_kind, source_type, source, retry, next_fire_at, created_at, updated_at)
       VALUES (@id, @project_id, @name, @target_service, @target_path, @target_kind, @source_type, @source, @retry, @next_fire_at, @created_at, @updated_at)`,
    ).run(t);
  },
  update(db: Db, t: TriggerRow): void {
    stmt(
      db,
      `UPDATE trg_triggers SET target_service = @target_service, target_path = @target_path, target_kind = @target_kind, source_type = @source_type,
       source = @source, retry = @retry, next_fire_at = @next_fire_at, updated_at = @updated_at WHERE id = @id`,
    ).run(t);
  },
  remove: (db: Db, id: string) => void stmt(db, 'DELETE FROM trg_triggers WHERE id = ?').run(id),
  /** The earliest run any schedule owes. */
  nextFireAt: (db: Db) => (stmt(db, 'SELECT MIN(next_fire_at) AS t FROM trg_triggers WHERE next_fire_at IS NOT NULL').get() as { t: number | null }).t,
  dueSchedules: (db: Db, now: number) =>
    stmt(db, 'SELECT * FROM trg_triggers WHERE next_fire_at IS NOT NULL AND next_fire_at <= ? ORDER BY next_fire_at').all(now) as TriggerRow[],
  setNextFire: (db: Db, id: string, at: number | null) => void stmt(db, 'UPDATE trg_triggers SET next_fire_at = ? WHERE id = ?').run(at, id),

  // ---- firings: pending deliveries and history ----
  addFiring(
    db: Db,
    f: Pick<FiringRow, 'trigger_id' | 'event_key' | 'scheduled_at' | 'body' | 'object_key' | 'catch_up' | 'manual' | 'status' | 'next_attempt_at'>,
  ): number | undefined {
    const r = stmt(
      db,
      `INSERT OR IGNORE INTO trg_firings (trigger_id, event_key, scheduled_at, body, object_key, catch_up, manual, status, next_attempt_at)
       VALUES (@trigger_id, @event_key, @scheduled_at, @body, @object_key, @catch_up, @manual, @status, @next_attempt_at)`,
    ).run(f);
    return r.changes ? Number(r.lastInsertRowid) : undefined;
  },
  firing: (db: Db, id: number) => stmt(db, 'SELECT * FROM trg_firings WHERE id = ?').get(id) as FiringRow | undefined,
  firingByEvent: (db: Db, triggerId: string, eventKey: string) =>
    stmt(db, 'SELECT * FROM trg_firings WHERE trigger_id = ? AND event_key = ?').get(triggerId, eventKey) as FiringRow | undefined,
  /** Deliveries whose next attempt is due, oldest first. */
  due: (db: Db, now: number, limit: number) =>
    stmt(db, "SELECT * FROM trg_firings WHERE status IN ('pending','retrying') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?").all(now, limit) as FiringRow[],
  nextDueAt: (db: Db) =>
    (stmt(db, "SELECT MIN(next_attempt_at) AS t FROM trg_firings WHERE status IN ('pending','retrying')").get() as { t: number | null }).t,
  /** The attempt is recorded before it is sent: a crash mid-attempt leaves a 'delivering' row to resume. */
  startAttempt: (db: Db, id: number, now: number) =>
    void stmt(db, "UPDATE trg_firings SET status = 'delivering', attempts = attempts + 1, first_attempt_at = COALESCE(first_attempt_at, ?) WHERE id = ?").run(now, id),
  finish: (db: Db, id: number, status: FiringStatus, now: number, httpStatus: number | null, error: string) =>
    void stmt(db, 'UPDATE trg_firings SET status = ?, finished_at = ?, next_attempt_at = NULL, http_status = ?, error = ? WHERE id = ?').run(status, now, httpStatus, error, id),
  /** `at` null: the messaging broker owns the next attempt (pubsub). */
  retryAt: (db: Db, id: number, at: number | null, httpStatus: number | null, error: string) =>
    void stmt(db, "UPDATE trg_firings SET status = 'retrying', next_attempt_at = ?, http_status = ?, error = ? WHERE id = ?").run(at, httpStatus, error, id),
  /**
   * After a crash: an attempt that was in flight got no answer, so it does not count (it is made
   * again at once), and no delivery is lost.
   */
  resumeInterrupted: (db: Db, now: number) =>
    stmt(db, "UPDATE trg_firings SET status = CASE WHEN attempts > 1 THEN 'retrying' ELSE 'pending' END, attempts = attempts - 1, next_attempt_at = ? WHERE status = 'delivering' AND (event_key IS NULL OR event_key NOT LIKE 'msg:%')").run(now).changes,
  /** A firing the messaging broker drives (pubsub): upserted per attempt, never queued here. */
  upsertBrokerFiring(db: Db, triggerId: string, eventKey: string, scheduledAt: number, attempt: number, now: number): number {
    stmt(
      db,
      `INSERT INTO trg_firings (trigger_id, event_key, scheduled_at, first_attempt_at, attempts, status)
       VALUES (?, ?, ?, ?, ?, 'delivering')
       ON CONFLICT (trigger_id, event_key) DO UPDATE SET attempts = excluded.attempts, status = 'delivering'`,
    ).run(triggerId, eventKey, scheduledAt, now, attempt);
    return (stmt(db, 'SELECT id FROM trg_firings WHERE trigger_id = ? AND event_key = ?').get(triggerId, eventKey) as { id: number }).id;
  },
  history: (db: Db, triggerId: string, limit: number) =>
    stmt(db, 'SELECT * FROM trg_firings WHERE trigger_id = ? ORDER BY id DESC LIMIT ?').all(triggerId, limit) as FiringRow[],
  /** Keeps the newest `keep` finished firings of a trigger; pending ones are never pruned. */
  prune: (db: Db, triggerId: string, keep: number) =>
    void stmt(
      db,
      `DELETE FROM trg_firings WHERE trigger_id = ? AND status NOT IN ${ACTIVE} AND id NOT IN
       (SELECT id FROM trg_firings WHERE trigger_id = ? AND status NOT IN ${ACTIVE} ORDER BY id DESC LIMIT ?)`,
    ).run(triggerId, triggerId, keep),

  // ---- objects seen ----
  seenObject: (db: Db, projectId: string, bucket: string, key: string) =>
    stmt(db, 'SELECT size, mtime_ms FROM trg_objects WHERE project_id = ? AND bucket = ? AND key = ?').get(projectId, bucket, key) as
      | { size: number; mtime_ms: number }
      | undefined,
  markObject: (db: Db, projectId: string, bucket: string, key: string, size: number, mtimeMs: number, now: string) =>
    void stmt(
      db,
      `INSERT INTO trg_objects (project_id, bucket, key, size, mtime_ms, seen_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, bucket, key) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, seen_at = excluded.seen_at`,
    ).run(projectId, bucket, key, size, mtimeMs, now),
  forgetObject: (db: Db, projectId: string, bucket: string, key: string) =>
    void stmt(db, 'DELETE FROM trg_objects WHERE project_id = ? AND bucket = ? AND key = ?').run(projectId, bucket, key),
};
