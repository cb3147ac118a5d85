/** Tables of the cache area (spec 3 §2.2). Passwords stay on the row because the supervisor
 * must authenticate its health probes; the row lives in the 0600-guarded state directory. */
export const cacheMigrations = [
  `CREATE TABLE cache_instances (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES acct_projects(id),
    name TEXT NOT NULL,
    size_class TEXT NOT NULL,
    version TEXT NOT NULL DEFAULT '',
    maxmemory_policy TEXT NOT NULL,
    persistence_enabled INTEGER NOT NULL,
    persistence_size TEXT NOT NULL,
    storage_class_name TEXT NOT NULL DEFAULT '',
    external_exposure INTEGER NOT NULL,
    port INTEGER NOT NULL UNIQUE,
    tls_port INTEGER UNIQUE,
    password TEXT NOT NULL,
    previous_password TEXT,
    state TEXT NOT NULL,
    message TEXT,
    ever_ready INTEGER NOT NULL DEFAULT 0,
    driver TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (project_id, name)
  )`,
] as const;
