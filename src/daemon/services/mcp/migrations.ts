/**
 * Schema of the MCP servers area (prefix mcp_). A server is a mutable row pointing at versions;
 * versions are immutable snapshots of the whole tool set (spec 2 §9) with their own build state
 * and, once built, the artifact and digest they run from. Secrets (the bearer, the workload key)
 * are stored only sealed under the daemon's master key.
 */
export const mcpMigrations = [
  `
  CREATE TABLE mcp_servers (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    expose TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('pending','building','deploying','ready','failed')),
    message TEXT NOT NULL DEFAULT '',
    -- The last version that became ready (or was rolled back to): the API's version and image.
    current_version INTEGER,
    -- The version instances start from: the current one, or the one being deployed.
    serving_version INTEGER,
    bearer_sealed TEXT NOT NULL,
    workload_key_sealed TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  );
  CREATE TABLE mcp_tools (
    server_id TEXT NOT NULL REFERENCES mcp_servers(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    handler TEXT NOT NULL,
    description TEXT,
    schema TEXT,
    credential_keys TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (server_id, name)
  );
  CREATE TABLE mcp_versions (
    server_id TEXT NOT NULL REFERENCES mcp_servers(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    build_id TEXT NOT NULL,
    -- JSON list of the tools of this version: name, handler, description, schema, credential_keys.
    tools TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending','building','deploying','ready','failed')),
    message TEXT NOT NULL DEFAULT '',
    image TEXT,
    image_digest TEXT,
    artifact TEXT,
    -- The tools/list result the runtime derived (names, descriptions, input schemas).
    manifest TEXT,
    output TEXT NOT NULL DEFAULT '',
    yanked_at TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (server_id, version)
  );
  CREATE UNIQUE INDEX mcp_versions_build ON mcp_versions(build_id);
  -- Running instances, so a restarted daemon can stop what a killed one left behind.
  CREATE TABLE mcp_instances (
    id TEXT PRIMARY KEY,
    server_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    driver TEXT NOT NULL,
    pid INTEGER,
    container TEXT,
    port INTEGER NOT NULL,
    started_at TEXT NOT NULL
  );
  `,
] as const;
