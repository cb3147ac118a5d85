import { stmt, type Db } from '../../store/db.js';
import { toBlob } from '../vector/scoring.js';
import type { KnowledgeDocument } from '../../../api/knowledge.js';

export interface DocumentRow {
  id: string;
  agent_id: string;
  source: string;
  chars: number;
  chunks: number;
  embedded: number;
  created_at: string;
}

export interface ChunkRow {
  rowid: number;
  document_id: string;
  position: number;
  text: string;
  source: string;
}

export const documentView = (r: DocumentRow): KnowledgeDocument => ({
  id: r.id,
  source: r.source,
  chars: r.chars,
  chunks: r.chunks,
  embedded: r.embedded === 1,
  created_at: r.created_at,
});

/** Knowledge rows of one agent; callers wrap writes in a transaction. */
export const knowledgeStore = {
  chunkCount: (db: Db, agentId: string) => (stmt(db, 'SELECT COUNT(*) AS n FROM knowledge_chunks WHERE agent_id = ?').get(agentId) as { n: number }).n,

  insertDocument(db: Db, doc: DocumentRow, chunks: string[], vectors: Float32Array[] | undefined): void {
    stmt(
      db,
      'INSERT INTO knowledge_documents (id, agent_id, seq, source, chars, chunks, embedded, created_at) VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM knowledge_documents WHERE agent_id = ?), ?, ?, ?, ?, ?)',
    ).run(
      doc.id,
      doc.agent_id,
      doc.agent_id,
      doc.source,
      doc.chars,
      doc.chunks,
      doc.embedded,
      doc.created_at,
    );
    const chunk = stmt(db, 'INSERT INTO knowledge_chunks (document_id, agent_id, position, text, embedding) VALUES (?, ?, ?, ?, ?)');
    const fts = stmt(db, 'INSERT INTO knowledge_fts (rowid, text, agent_id) VALUES (?, ?, ?)');
    chunks.forEach((text, i) => {
      const v = vectors?.[i];
      const { lastInsertRowid } = chunk.run(doc.id, doc.agent_id, i, text, v ? toBlob(v) : null);
      fts.run(lastInsertRowid, text, doc.agent_id);
    });
  },

  /** Oldest first, by the order of addition (immutable), so offset paging is stable. */
  list: (db: Db, agentId: string, offset: number, limit: number) =>
    stmt(db, 'SELECT * FROM knowledge_documents WHERE agent_id = ? ORDER BY seq LIMIT ? OFFSET ?').all(agentId, limit, offset) as DocumentRow[],

  document: (db: Db, agentId: string, id: string) =>
    stmt(db, 'SELECT * FROM knowledge_documents WHERE agent_id = ? AND id = ?').get(agentId, id) as DocumentRow | undefined,

  deleteDocument(db: Db, id: string): void {
    stmt(db, 'DELETE FROM knowledge_chunks WHERE document_id = ?').run(id);
    stmt(db, 'DELETE FROM knowledge_documents WHERE id = ?').run(id);
  },

  empty(db: Db, agentId: string): { documents: number; chunks: number } {
    const chunks = stmt(db, 'DELETE FROM knowledge_chunks WHERE agent_id = ?').run(agentId).changes;
    const documents = stmt(db, 'DELETE FROM knowledge_documents WHERE agent_id = ?').run(agentId).changes;
    return { documents, chunks };
  },

  /** BM25 over the agent's chunks, best first; FTS5's bm25() is lower-is-better, so it is negated. */
  bm25(db: Db, agentId: string, match: string, limit: number): Array<{ rowid: number; score: number }> {
    return stmt(
      db,
      'SELECT rowid, -bm25(knowledge_fts) AS score FROM knowledge_fts WHERE knowledge_fts MATCH ? AND agent_id = ? ORDER BY bm25(knowledge_fts), rowid LIMIT ?',
    ).all(match, agentId, limit) as Array<{ rowid: number; score: number }>;
  },

  hasEmbeddings: (db: Db, agentId: string) => stmt(db, 'SELECT 1 FROM knowledge_chunks WHERE agent_id = ? AND embedding IS NOT NULL LIMIT 1').get(agentId) !== undefined,

  /** Every embedded chunk of the agent: the vector side is an exact scan (see docs/decisions/knowledge.md). */
  embeddings: (db: Db, agentId: string) =>
    stmt(db, 'SELECT rowid, embedding FROM knowledge_chunks WHERE agent_id = ? AND embedding IS NOT NULL').all(agentId) as Array<{ rowid: number; embedding: Buffer }>,

  chunks(db: Db, rowids: number[]): Map<number, ChunkRow> {
    if (!rowids.length) return new Map();
    const rows = db
      .prepare(
        `SELECT c.rowid, c.document_id, c.position, c.text, d.source FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE c.rowid IN (${rowids.map(() => '?').join(',')})`,
      )
      .all(...rowids) as ChunkRow[];
    return new Map(rows.map((r) => [r.rowid, r]));
  },
};
