/**
 * Schema of the agents area. Agents are mutable rows; revisions are immutable snapshots
 * (spec 1 §9); builds carry the queue state so a restart can resume them; files are the
 * editable stored source (latest version only, spec 1 §8.6).
 */
export const agentMigrations = [
  `
  CREATE TABLE agents_agents (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('agent','function')),
    framework TEXT NOT NULL,
    runtime TEXT,
    owner TEXT,
    state TEXT NOT NULL CHECK (state IN ('building','deploying','ready','failed')),
    message TEXT NOT NULL DEFAULT '',
    image TEXT,
    latest_revision TEXT,
    config TEXT NOT NULL DEFAULT '{}',
    workload_key TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  );
  CREATE TABLE agents_revisions (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    reason TEXT NOT NULL,
    build_id TEXT NOT NULL,
    image TEXT,
    artifact TEXT,
    env TEXT NOT NULL DEFAULT '{}',
    secret_keys TEXT NOT NULL DEFAULT '[]',
    config TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    UNIQUE (agent_id, seq)
  );
  CREATE TABLE agents_builds (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    reason TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued','running','succeeded','failed','superseded')),
    queued_at TEXT NOT NULL,
    claimed_at TEXT,
    finished_at TEXT,
    output TEXT NOT NULL DEFAULT ''
  );
  CREATE INDEX agents_builds_agent ON agents_builds(agent_id, state);
  CREATE TABLE agents_files (
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    content BLOB NOT NULL,
    mode INTEGER NOT NULL DEFAULT 420,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, path)
  );
  CREATE TABLE agents_secrets (
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (agent_id, key)
  );
  CREATE TABLE agents_env (
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (agent_id, key)
  );
  -- Log lines outlive instances but not their agent; retention prunes by ts.
  CREATE TABLE agents_logs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    ts TEXT NOT NULL,
    revision TEXT NOT NULL,
    instance TEXT NOT NULL,
    stream TEXT NOT NULL,
    message TEXT NOT NULL
  );
  CREATE INDEX agents_logs_agent ON agents_logs(agent_id, seq);
  CREATE INDEX agents_logs_ts ON agents_logs(ts);
  -- Running instances, so a restarted daemon can find and stop what a killed one left behind.
  CREATE TABLE agents_instances (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    revision TEXT NOT NULL,
    driver TEXT NOT NULL,
    pid INTEGER,
    container TEXT,
    port INTEGER NOT NULL,
    started_at TEXT NOT NULL
  );
  `,
  // The revision requests go to: during deploying (and after a failed deploy) the previous one
  // keeps serving, as Cloud Run keeps traffic on the last ready revision.
  `ALTER TABLE agents_agents ADD COLUMN serving_revision TEXT;`,
  // A revision's own state, so one that failed (its build or its start) stays listed beside the
  // one that keeps serving; the build's output stays on its build row.
  `ALTER TABLE agents_revisions ADD COLUMN state TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('deploying','ready','failed'));
   ALTER TABLE agents_revisions ADD COLUMN message TEXT NOT NULL DEFAULT '';`,
  // MCP servers recorded when the revision was rolled (spec 2 §4.2: MCP_SERVERS is computed at
  // revision build); rendered with current urls when an instance starts. JSON list of server ids.
  `ALTER TABLE agents_revisions ADD COLUMN mcp_servers TEXT NOT NULL DEFAULT '[]';`,
  // The traffic split between revisions (docs/decisions/agents-traffic.md): a JSON list of
  // targets in the services' shape; NULL is the default, every request to the latest revision.
  `ALTER TABLE agents_agents ADD COLUMN traffic TEXT;`,
];
