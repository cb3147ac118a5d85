/**
 * Schema of the sessions area (prefix sess_). A session is keyed by its agent and its id; its
 * turns are append-only rows numbered from 1 (rewind deletes the tail, clone copies rows).
 * Memory entries carry `terms`, the normalized words relevance ranking reads (rebuilt by reindex).
 */
export const sessionMigrations = [
  `
  CREATE TABLE sess_sessions (
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    cloned_from TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, id)
  );
  CREATE INDEX sess_sessions_newest ON sess_sessions (agent_id, updated_at DESC, id);
  CREATE TABLE sess_turns (
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    message TEXT NOT NULL,
    output TEXT NOT NULL,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    events TEXT NOT NULL DEFAULT '[]',
    status INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, session_id, idx),
    FOREIGN KEY (agent_id, session_id) REFERENCES sess_sessions(agent_id, id) ON DELETE CASCADE
  );
  CREATE TABLE sess_memory_policy (
    agent_id TEXT PRIMARY KEY REFERENCES agents_agents(id) ON DELETE CASCADE,
    enabled INTEGER NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('user','agent')),
    retention_days INTEGER,
    inject INTEGER NOT NULL,
    last_reindex_at TEXT,
    last_memorize_at TEXT
  );
  CREATE TABLE sess_memories (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    user_id TEXT,
    fact TEXT NOT NULL,
    terms TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('generated','manual')),
    confirmed INTEGER NOT NULL,
    invalidated INTEGER NOT NULL DEFAULT 0,
    session_id TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT
  );
  CREATE INDEX sess_memories_agent ON sess_memories (agent_id, created_at DESC);
  `,
  // The policy's extraction and knowledge fields (issue 23): a stored policy takes their defaults
  // (sensitive facts excluded, no topics, no instructions, knowledge on).
  `
  ALTER TABLE sess_memory_policy ADD COLUMN exclude_sensitive INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE sess_memory_policy ADD COLUMN topics TEXT NOT NULL DEFAULT '[]';
  ALTER TABLE sess_memory_policy ADD COLUMN instructions TEXT NOT NULL DEFAULT '';
  ALTER TABLE sess_memory_policy ADD COLUMN knowledge_enabled INTEGER NOT NULL DEFAULT 1;
  `,
];
