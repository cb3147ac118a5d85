import type { Db } from '../../store/db.js';
import { fromBlob } from '../vector/scoring.js';
import { knowledgeStore } from './store.js';

/** An agent's embedded chunks as one contiguous float32 matrix (rows in `rowids` order). */
export interface AgentVectors {
  rowids: number[];
  dims: number;
  matrix: Float32Array;
}

/**
 * Keeps each searched agent's vectors in memory: reading 10,000 blobs from SQLite per query cost
 * most of a hybrid search. Any write to an agent's knowledge drops its entry; the next search
 * reloads it. Bounded by agents, least recently used out first.
 */
export class VectorCache {
  private readonly entries = new Map<string, AgentVectors>();
  constructor(private readonly maxAgents = 32) {}

  get(db: Db, agentId: string): AgentVectors {
    const hit = this.entries.get(agentId);
    if (hit) {
      this.entries.delete(agentId);
      this.entries.set(agentId, hit);
      return hit;
    }
    const rows = knowledgeStore.embeddings(db, agentId);
    const dims = rows.length ? rows[0]!.embedding.byteLength / 4 : 0;
    // Chunks embedded by another model (other dims) cannot be compared with this query: kept out.
    const same = rows.filter((r) => r.embedding.byteLength / 4 === dims);
    const matrix = new Float32Array(same.length * dims);
    same.forEach((r, i) => matrix.set(fromBlob(r.embedding), i * dims));
    const entry = { rowids: same.map((r) => r.rowid), dims, matrix };
    this.entries.set(agentId, entry);
    if (this.entries.size > this.maxAgents) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }

  drop(agentId: string): void {
    this.entries.delete(agentId);
  }
}
