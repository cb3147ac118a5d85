/** Secret store tables (prefix sec_). Values are only ever stored sealed (AES-256-GCM). */
export const secretMigrations = [
  `CREATE TABLE sec_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
   CREATE TABLE sec_secrets (
     project_id TEXT NOT NULL,
     name TEXT NOT NULL,
     current_version INTEGER NOT NULL,
     -- 0 after delete: the row stays so version numbers are never reused (destroyed versions stay listed)
     live INTEGER NOT NULL DEFAULT 1,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     PRIMARY KEY (project_id, name));
   CREATE TABLE sec_versions (
     project_id TEXT NOT NULL,
     name TEXT NOT NULL,
     version INTEGER NOT NULL,
     ciphertext BLOB,
     created_at TEXT NOT NULL,
     destroyed_at TEXT,
     PRIMARY KEY (project_id, name, version));
   CREATE TABLE sec_tokens (
     hash TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     secret_name TEXT,
     expires_at INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     actor TEXT NOT NULL);
   CREATE INDEX sec_tokens_expiry ON sec_tokens (expires_at);
   CREATE TABLE sec_bindings (
     id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     agent_id TEXT NOT NULL,
     agent TEXT NOT NULL,
     env_name TEXT NOT NULL,
     secret_name TEXT NOT NULL,
     version INTEGER,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     UNIQUE (project_id, agent, env_name));
   CREATE INDEX sec_bindings_secret ON sec_bindings (project_id, secret_name);`,
] as const;
