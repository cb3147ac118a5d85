/** Schema of the account layer: people, organizations, projects, grants, credentials, audit. */
export const accountMigrations = [
  `
  CREATE TABLE acct_orgs (
    id TEXT PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE acct_users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin','user')),
    must_change_password INTEGER NOT NULL DEFAULT 1,
    org_id TEXT REFERENCES acct_orgs(id),
    created_at TEXT NOT NULL
  );
  CREATE TABLE acct_org_members (
    org_id TEXT NOT NULL REFERENCES acct_orgs(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES acct_users(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('admin','member')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, user_id)
  );
  CREATE TABLE acct_projects (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES acct_orgs(id),
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    short TEXT NOT NULL UNIQUE,
    is_default INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
  );
  CREATE TABLE acct_project_quotas (
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    resource TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    PRIMARY KEY (project_id, resource)
  );
  CREATE TABLE acct_service_accounts (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    disabled INTEGER NOT NULL DEFAULT 0,
    deleted_at TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  );
  -- One row per grant. Break-glass rows are kept after expiry as visible history.
  CREATE TABLE acct_project_members (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    user_id TEXT REFERENCES acct_users(id) ON DELETE CASCADE,
    service_account_id TEXT REFERENCES acct_service_accounts(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('admin','member')),
    break_glass INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT,
    reason TEXT,
    granted_by TEXT,
    created_at TEXT NOT NULL,
    CHECK ((user_id IS NULL) <> (service_account_id IS NULL))
  );
  CREATE UNIQUE INDEX acct_project_members_user ON acct_project_members(project_id, user_id) WHERE break_glass = 0 AND user_id IS NOT NULL;
  CREATE UNIQUE INDEX acct_project_members_sa ON acct_project_members(project_id, service_account_id) WHERE service_account_id IS NOT NULL;
  CREATE TABLE acct_api_keys (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL UNIQUE,
    secret_hash TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('personal','service_account','workload')),
    user_id TEXT REFERENCES acct_users(id) ON DELETE CASCADE,
    service_account_id TEXT REFERENCES acct_service_accounts(id) ON DELETE CASCADE,
    project_id TEXT REFERENCES acct_projects(id) ON DELETE CASCADE,
    workload TEXT,
    display_name TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    expires_at TEXT,
    last_used_at TEXT,
    revoked_at TEXT
  );
  CREATE TABLE acct_invitations (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin','member')),
    token_hash TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('open','accepted','revoked','expired')),
    invited_by TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    accepted_at TEXT
  );
  CREATE TABLE acct_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    project_id TEXT,
    ts TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    details TEXT NOT NULL DEFAULT '{}',
    request_id TEXT
  );
  CREATE INDEX acct_audit_project ON acct_audit(project_id, seq);
  `,
  // Issue 17: a service-account key minted under break-glass dies with that grant.
  `ALTER TABLE acct_api_keys ADD COLUMN break_glass_grant_id TEXT;
   CREATE INDEX acct_api_keys_grant ON acct_api_keys(break_glass_grant_id) WHERE break_glass_grant_id IS NOT NULL;`,
];
