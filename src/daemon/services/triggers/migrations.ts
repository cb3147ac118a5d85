/**
 * Schema of the triggers area (prefix trg_). A trigger row holds its write fields and, for a
 * schedule, the next run it owes (`next_fire_at`): a run is claimed and the next one computed in
 * one transaction, so a crash can neither lose nor repeat it. A firing row is both the pending
 * delivery (status pending/retrying with `next_attempt_at`) and, once finished, history.
 * `trg_objects` marks each object version seen, so each arrival fires once across restarts.
 */
export const triggerMigrations = [
  `
  CREATE TABLE trg_triggers (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    target_service TEXT NOT NULL,
    target_path TEXT NOT NULL,
    -- The kind the target resolved to at create or patch: service, function or agent.
    target_kind TEXT NOT NULL,
    source_type TEXT NOT NULL CHECK (source_type IN ('schedule','pubsub','objectstore')),
    -- The source sub-object as stored after defaults (JSON).
    source TEXT NOT NULL,
    -- retry (max_attempts, backoff) after defaults (JSON).
    retry TEXT NOT NULL,
    -- Schedules: epoch ms of the next run owed; NULL for other sources.
    next_fire_at INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  );
  CREATE INDEX trg_triggers_next ON trg_triggers(next_fire_at) WHERE next_fire_at IS NOT NULL;
  CREATE TABLE trg_firings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    trigger_id TEXT NOT NULL REFERENCES trg_triggers(id) ON DELETE CASCADE,
    -- A source's own identity for the event (object version, message id): one firing per event.
    event_key TEXT,
    scheduled_at INTEGER NOT NULL,
    first_attempt_at INTEGER,
    finished_at INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('pending','delivering','retrying','succeeded','failed','dead_lettered')),
    next_attempt_at INTEGER,
    http_status INTEGER,
    error TEXT NOT NULL DEFAULT '',
    -- What is POSTed: the schedule payload, or the object key (its bytes are read at delivery).
    body BLOB,
    object_key TEXT,
    catch_up INTEGER NOT NULL DEFAULT 0,
    manual INTEGER NOT NULL DEFAULT 0,
    UNIQUE (trigger_id, event_key)
  );
  CREATE INDEX trg_firings_due ON trg_firings(next_attempt_at) WHERE status IN ('pending','retrying','delivering');
  CREATE INDEX trg_firings_history ON trg_firings(trigger_id, id);
  CREATE TABLE trg_objects (
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    -- The version seen: a rewrite of the same key with another size or mtime is a new arrival.
    size INTEGER NOT NULL,
    mtime_ms INTEGER NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (project_id, bucket, key)
  );
  `,
] as const;
