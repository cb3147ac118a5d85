/**
 * Schema of the gateway area (prefix gw_). An endpoint row holds its address (name, or a claimed
 * custom hostname), its target and settings (JSON), and whether it is published. Keys store only
 * the SHA-256 of their secret; a rotation adds the successor row and marks the old one superseded
 * with the end of its overlap. Domains are claimed hostnames, unique across all projects.
 */
export const gatewayMigrations = [
  `
  CREATE TABLE gw_endpoints (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_name TEXT NOT NULL DEFAULT '',
    -- A claimed custom hostname of the project, or '' for the shared address.
    hostname TEXT NOT NULL DEFAULT '',
    -- {mode, jwt?}, the CIDR list and the rate limit (or null), as JSON.
    auth TEXT NOT NULL,
    ip_allowlist TEXT NOT NULL DEFAULT '[]',
    rate_limit TEXT,
    published INTEGER NOT NULL DEFAULT 0,
    -- A project-scoped credential for the vectordb and pubsub targets, sealed under the master key.
    credential_sealed TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  );
  CREATE INDEX gw_endpoints_hostname ON gw_endpoints(hostname) WHERE hostname != '';
  CREATE TABLE gw_keys (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES gw_endpoints(id) ON DELETE CASCADE,
    key_id TEXT NOT NULL UNIQUE,
    secret_hash TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    expires_at TEXT,
    -- Set on the outgoing half of a rotation: the secret works until then.
    superseded_until TEXT,
    revoked_at TEXT
  );
  CREATE INDEX gw_keys_endpoint ON gw_keys(endpoint_id);
  CREATE TABLE gw_domains (
    hostname TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    note TEXT NOT NULL DEFAULT '',
    verified_at TEXT,
    checked_at TEXT,
    created_at TEXT NOT NULL
  );
  CREATE INDEX gw_domains_project ON gw_domains(project_id);
  `,
] as const;
