/**
 * Messaging tables. Messages are stored once per topic; `msg_pending` is each subscription's
 * cursor as individual rows (Pulsar's individually-acknowledged ranges): a row exists while the
 * subscription owes an acknowledgement, and a message with no row left is reclaimed.
 */
export const messagingMigrations = [
  `CREATE TABLE msg_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
   INSERT INTO msg_meta (k, v) VALUES ('next_ledger', 1);
   CREATE TABLE msg_topics (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     project_id TEXT NOT NULL REFERENCES acct_projects(id) ON DELETE CASCADE,
     name TEXT NOT NULL,
     display_name TEXT NOT NULL DEFAULT '',
     max_bytes INTEGER NOT NULL,
     max_age_ms INTEGER NOT NULL DEFAULT 0,
     discard TEXT NOT NULL,
     state TEXT NOT NULL,
     message TEXT NOT NULL DEFAULT '',
     storage_bytes INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     UNIQUE (project_id, name)
   );
   CREATE TABLE msg_subscriptions (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     topic_id INTEGER NOT NULL REFERENCES msg_topics(id) ON DELETE CASCADE,
     project_id TEXT NOT NULL,
     name TEXT NOT NULL,
     display_name TEXT NOT NULL DEFAULT '',
     type TEXT NOT NULL,
     ack_deadline_seconds INTEGER NOT NULL,
     max_deliver INTEGER NOT NULL,
     start_from TEXT NOT NULL,
     max_ack_pending INTEGER NOT NULL,
     deliver_mode TEXT NOT NULL,
     push_url TEXT,
     content_mode TEXT,
     dl_topic TEXT,
     dl_after INTEGER,
     state TEXT NOT NULL,
     message TEXT NOT NULL DEFAULT '',
     created_at TEXT NOT NULL,
     UNIQUE (topic_id, name)
   );
   CREATE TABLE msg_messages (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     topic_id INTEGER NOT NULL,
     ledger INTEGER NOT NULL,
     entry INTEGER NOT NULL,
     data BLOB NOT NULL,
     attributes TEXT,
     key TEXT,
     publish_time INTEGER NOT NULL,
     size INTEGER NOT NULL
   );
   CREATE INDEX msg_messages_topic ON msg_messages (topic_id, seq);
   CREATE TABLE msg_pending (
     sub_id INTEGER NOT NULL,
     seq INTEGER NOT NULL,
     topic_id INTEGER NOT NULL,
     size INTEGER NOT NULL,
     key TEXT,
     attempt INTEGER NOT NULL DEFAULT 0,
     visible_at INTEGER NOT NULL DEFAULT 0,
     consumer TEXT,
     last_error TEXT,
     first_failure_at INTEGER,
     PRIMARY KEY (sub_id, seq)
   ) WITHOUT ROWID;
   CREATE INDEX msg_pending_seq ON msg_pending (seq);
   CREATE INDEX msg_pending_visible ON msg_pending (sub_id, visible_at);
   CREATE INDEX msg_pending_topic ON msg_pending (topic_id);`,
  // A pending row belongs to its subscription only: the topic is reached through the subscription,
  // so a publish writes one narrower row and one index fewer per subscription.
  `DROP INDEX IF EXISTS msg_pending_topic;
   ALTER TABLE msg_pending DROP COLUMN topic_id;`,
  // Fewer index writes per message. msg_pending_seq (seq alone) served "does anyone still owe this
  // message": those checks now probe the primary key (sub_id, seq) for each subscription of the
  // topic, so publish and acknowledge maintain one index fewer per pending row. The visibility
  // index carries the attempt as well, so a pull reads its pending rows from the index alone.
  `DROP INDEX IF EXISTS msg_pending_seq;
   DROP INDEX IF EXISTS msg_pending_visible;
   CREATE INDEX msg_pending_visible ON msg_pending (sub_id, visible_at, seq, attempt);`,
] as const;
