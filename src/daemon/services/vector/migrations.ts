/** Vector area tables (spec 3 §2.1): index settings and state, and points with float32 vectors. */
export const vectorMigrations = [
  `CREATE TABLE vec_indexes (
     id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES acct_projects(id),
     name TEXT NOT NULL,
     dimensions INTEGER NOT NULL,
     distance TEXT NOT NULL,
     on_disk INTEGER NOT NULL,
     payload_on_disk INTEGER NOT NULL,
     q_kind TEXT NOT NULL,
     q_quantile TEXT,
     q_always_ram INTEGER NOT NULL,
     shards INTEGER NOT NULL,
     replicas INTEGER NOT NULL,
     state TEXT NOT NULL,
     message TEXT,
     points_count INTEGER NOT NULL DEFAULT 0,
     vectors_count INTEGER NOT NULL DEFAULT 0,
     segments_count INTEGER NOT NULL DEFAULT 0,
     counts_at TEXT,
     created_at TEXT NOT NULL,
     UNIQUE (project_id, name)
   )`,
  `CREATE TABLE vec_points (
     index_id TEXT NOT NULL REFERENCES vec_indexes(id) ON DELETE CASCADE,
     id_key TEXT NOT NULL,
     vector BLOB NOT NULL,
     payload TEXT NOT NULL,
     PRIMARY KEY (index_id, id_key)
   )`,
  // Saved graphs record the write sequence they reflect; rows written after it are reinserted on load.
  `ALTER TABLE vec_indexes ADD COLUMN write_seq INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE vec_points ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;`,
  // Payload indexes a Qdrant client asked for (issue 16): recorded and shown in collection info.
  `CREATE TABLE vec_payload_indexes (
     index_id TEXT NOT NULL REFERENCES vec_indexes(id) ON DELETE CASCADE,
     field_name TEXT NOT NULL,
     field_schema TEXT NOT NULL,
     created_at TEXT NOT NULL,
     PRIMARY KEY (index_id, field_name)
   )`,
];
