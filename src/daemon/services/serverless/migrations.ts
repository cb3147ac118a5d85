/**
 * Schema of the serverless area (prefix svc_). A service row holds its current spec (the write
 * fields, JSON) and bookkeeping; revisions are immutable snapshots of the template, with the
 * values `env_from` read from project secrets sealed at rest, and the last report of the data
 * plane about each. Sources are content-addressed archives of `services deploy DIR`.
 */
export const serverlessMigrations = [
  `
  CREATE TABLE svc_services (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    -- The write fields as stored after defaults (JSON): what GET shows and the next patch merges onto.
    spec TEXT NOT NULL,
    generation INTEGER NOT NULL,
    observed_generation INTEGER NOT NULL,
    latest_created TEXT NOT NULL,
    -- Next revision sequence number (never reused, even after revisions are gone).
    next_seq INTEGER NOT NULL,
    -- Conditions as last derived (JSON list with last_transition_time), and the readiness summary.
    conditions TEXT NOT NULL DEFAULT '[]',
    state TEXT NOT NULL DEFAULT 'pending',
    message TEXT NOT NULL DEFAULT '',
    state_changed_at TEXT NOT NULL,
    -- Set when the control plane could not act on the spec (state invalid).
    invalid TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  );
  CREATE TABLE svc_revisions (
    service_id TEXT NOT NULL REFERENCES svc_services(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    -- The template (image, command, args, env, env_from, port, resources, timeout, runtime class), JSON.
    template TEXT NOT NULL,
    -- Values read from project secrets by env_from, sealed (JSON map) under the master key.
    secret_env TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'unknown' CHECK (state IN ('ready','not_ready','unknown')),
    reason TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL DEFAULT '',
    replicas INTEGER NOT NULL DEFAULT 0,
    -- First time the data plane reported it ready: latest_ready_revision is the newest such one.
    ready_at TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (service_id, name),
    UNIQUE (service_id, seq)
  );
  CREATE TABLE svc_sources (
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    digest TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, digest)
  );
  `,
  `
  -- The data plane's word on the revision's network (JSON {isolated, message?}; '' before it
  -- decided): the VisibilityEnforced condition reads it.
  ALTER TABLE svc_revisions ADD COLUMN network TEXT NOT NULL DEFAULT '';
  `,
] as const;
