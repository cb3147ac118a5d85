import type { Db } from '../../store/db.js';
import type { KnowledgeHit } from '../../../api/knowledge.js';
import { knowledgeStore } from './store.js';
import type { AgentVectors, VectorCache } from './vector-cache.js';

/** Reciprocal rank fusion constant (Cormack et al. 2009; the k Azure AI Search, Elastic and Qdrant use). */
const RRF_K = 60;
/** Candidates taken from each side before fusion: enough that a chunk strong on one side survives. */
const CANDIDATES = 50;

/**
 * The FTS5 query for free text: each word quoted (so `AND`, `NEAR`, `*` or a stray quote in the
 * user's text are words, not syntax) and joined with OR, so a chunk needs only some of the words
 * and BM25 ranks those with more, rarer ones higher.
 */
export function ftsQuery(text: string): string | undefined {
  const words = text.match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (!words.length) return undefined;
  return [...new Set(words.map((w) => w.toLowerCase()))].map((w) => `"${w}"`).join(' OR ');
}

/**
 * Ranks an agent's chunks for a query: BM25 alone, or with a query vector the fusion of the BM25
 * and cosine rankings by reciprocal rank (scores of the two sides are on different scales, ranks
 * are not). Each hit reports the side scores it had.
 */
export function rankChunks(db: Db, cache: VectorCache, agentId: string, query: string, topK: number, queryVector: Float32Array | undefined): KnowledgeHit[] {
  const match = ftsQuery(query);
  const bm25 = match ? knowledgeStore.bm25(db, agentId, match, queryVector ? CANDIDATES : topK) : [];
  if (!queryVector) return hits(db, bm25.map((b) => ({ rowid: b.rowid, score: b.score, bm25: b.score })));

  const vectors = topByCosine(cache.get(db, agentId), queryVector, CANDIDATES);
  const fused = new Map<number, { rowid: number; score: number; bm25?: number; vector?: number }>();
  const entry = (rowid: number) => fused.get(rowid) ?? fused.set(rowid, { rowid, score: 0 }).get(rowid)!;
  bm25.forEach((b, rank) => {
    const e = entry(b.rowid);
    e.score += 1 / (RRF_K + rank + 1);
    e.bm25 = b.score;
  });
  vectors.forEach((v, rank) => {
    const e = entry(v.rowid);
    e.score += 1 / (RRF_K + rank + 1);
    e.vector = v.score;
  });
  const ranked = [...fused.values()].sort((a, b) => b.score - a.score || a.rowid - b.rowid).slice(0, topK);
  return hits(db, ranked);
}

function hits(db: Db, ranked: Array<{ rowid: number; score: number; bm25?: number; vector?: number }>): KnowledgeHit[] {
  const rows = knowledgeStore.chunks(
    db,
    ranked.map((r) => r.rowid),
  );
  return ranked.flatMap((r) => {
    const c = rows.get(r.rowid);
    if (!c) return [];
    return [
      {
        document_id: c.document_id,
        source: c.source,
        chunk: c.position,
        text: c.text,
        score: r.score,
        ...(r.bm25 !== undefined ? { bm25_score: r.bm25 } : {}),
        ...(r.vector !== undefined ? { vector_score: r.vector } : {}),
      },
    ];
  });
}

/** The n best rows by dot product (cosine: both sides are normalised), best first, ties by rowid. */
function topByCosine(v: AgentVectors, q: Float32Array, n: number): Array<{ rowid: number; score: number }> {
  if (v.dims !== q.length) return [];
  const scored: Array<{ rowid: number; score: number }> = new Array(v.rowids.length);
  const { matrix, dims } = v;
  for (let i = 0; i < v.rowids.length; i++) {
    let s = 0;
    const base = i * dims;
    for (let j = 0; j < dims; j++) s += matrix[base + j]! * q[j]!;
    scored[i] = { rowid: v.rowids[i]!, score: s };
  }
  return scored.filter((r) => Number.isFinite(r.score)).sort((a, b) => b.score - a.score || a.rowid - b.rowid).slice(0, n);
}
