/**
 * Schema of the knowledge area. Chunks hang off an agent (deleting the agent deletes them); the
 * FTS5 table holds the chunk text for BM25 with the chunk's rowid, and is kept in step by the
 * store (not triggers) so one transaction writes both.
 */
export const knowledgeMigrations = [
  `
  CREATE TABLE knowledge_documents (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
    -- Order of addition within the agent (documents of one add share created_at).
    seq INTEGER NOT NULL,
    source TEXT NOT NULL,
    chars INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    embedded INTEGER NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX knowledge_documents_agent ON knowledge_documents(agent_id, seq);
  CREATE TABLE knowledge_chunks (
    rowid INTEGER PRIMARY KEY,
    document_id TEXT NOT NULL REFERENCES knowledge_documents(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    text TEXT NOT NULL,
    embedding BLOB
  );
  CREATE INDEX knowledge_chunks_agent ON knowledge_chunks(agent_id);
  CREATE INDEX knowledge_chunks_document ON knowledge_chunks(document_id);
  CREATE VIRTUAL TABLE knowledge_fts USING fts5(text, agent_id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2');
  -- The FTS table has no foreign key: an agent's delete cascades to chunks, and this trigger
  -- follows every chunk delete (one document, emptying, or the agent itself).
  CREATE TRIGGER knowledge_chunks_fts_delete AFTER DELETE ON knowledge_chunks BEGIN
    DELETE FROM knowledge_fts WHERE rowid = old.rowid;
  END;
  `,
];
