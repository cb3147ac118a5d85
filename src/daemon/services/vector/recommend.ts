import { VECTOR_LIMITS as L, type ScoredPoint } from '../../../api/vector.js';
import { badRequest, notFound } from '../../http/errors.js';
import { idFromKey, parsePointId } from './point-ids.js';
import { checkVector, queryPoints, requestFilter, requireReady } from './points.js';
import type { VectorRuntime } from './runtime.js';
import { exactScore, fromBlob, passesThreshold, storedForm } from './scoring.js';
import type { IndexRow } from './store.js';

/** A recommendation example: a vector, or the id of a stored point standing for its vector. */
export type Example = number[] | number | string;
export type Strategy = 'average_vector' | 'best_score' | 'sum_scores';

export interface RecommendInput {
  positive: Example[];
  negative: Example[];
  strategy?: Strategy | null;
  limit?: number;
  offset?: number | null;
  filter?: unknown;
  score_threshold?: number | null;
  with_payload: boolean;
  with_vector: boolean;
}

/** Examples in stored form (cosine normalized), and the ids among them, which never come back as results. */
function resolve(rt: VectorRuntime, row: IndexRow, examples: Example[], side: string): { vectors: Float32Array[]; ids: Array<number | string> } {
  const engine = rt.engine(row);
  const vectors: Float32Array[] = [];
  const ids: Array<number | string> = [];
  examples.forEach((e, i) => {
    if (Array.isArray(e)) {
      checkVector(row, e, `${side}[${i}]`);
      vectors.push(storedForm(row.distance, e));
      return;
    }
    const id = parsePointId(e);
    if ('error' in id) throw badRequest(`invalid ${side}[${i}]: ${id.error}`);
    const v = engine.vectorOf(id.key);
    // Qdrant's answer for an example id that is not stored.
    if (!v) throw notFound(`No point with id ${String(e)} found`);
    vectors.push(v);
    ids.push(idFromKey(id.key));
  });
  return { vectors, ids };
}

/** Ids given as examples are left out of the results, as Qdrant does. */
function withoutIds(filter: unknown, ids: Array<number | string>): unknown {
  if (!ids.length) return filter;
  const exclude = { must_not: [{ has_id: ids }] };
  return filter === undefined ? exclude : { must: [filter], ...exclude };
}

/**
 * Qdrant's recommend. `average_vector` (the default) searches near avg(positive) + (avg(positive) -
 * avg(negative)) through the index like any query. `best_score` and `sum_scores` score every
 * (filtered) point against all examples by an exact scan: best_score takes the best positive
 * similarity unless a negative is closer, then minus that negative's squared similarity;
 * sum_scores adds positive similarities and subtracts negative ones. Similarity is the score for
 * cosine and dot and the negated distance for euclid, so higher is always better there.
 */
export function recommendPoints(rt: VectorRuntime, row: IndexRow, input: RecommendInput): ScoredPoint[] {
  requireReady(row);
  const pos = resolve(rt, row, input.positive, 'positive');
  const neg = resolve(rt, row, input.negative, 'negative');
  const strategy = input.strategy ?? 'average_vector';
  if (strategy === 'average_vector' && !pos.vectors.length) throw badRequest('recommend needs at least one positive example with the average_vector strategy');
  if (!pos.vectors.length && !neg.vectors.length) throw badRequest('recommend needs at least one positive or negative example');
  const filter = withoutIds(input.filter, [...pos.ids, ...neg.ids]);
  const limit = input.limit ?? L.topKDefault;
  const offset = input.offset ?? 0;
  if (strategy === 'average_vector') {
    const avgPos = average(pos.vectors);
    const avgNeg = neg.vectors.length ? average(neg.vectors) : undefined;
    const query = avgNeg ? avgPos.map((x, i) => 2 * x - avgNeg[i]!) : avgPos;
    return queryPoints(rt, row, {
      vector: Array.from(query),
      top_k: limit,
      offset,
      filter,
      with_payload: input.with_payload,
      with_vector: input.with_vector,
      ...(input.score_threshold != null ? { score_threshold: input.score_threshold } : {}),
    }).results;
  }
  return scanScored(rt, row, filter, (v) => strategyScore(strategy, row, v, pos.vectors, neg.vectors), { ...input, limit, offset });
}

function average(vs: Float32Array[]): Float32Array {
  const out = new Float32Array(vs[0]!.length);
  for (const v of vs) for (let i = 0; i < v.length; i++) out[i]! += v[i]! / vs.length;
  return out;
}

function strategyScore(strategy: Strategy, row: IndexRow, v: Float32Array, pos: Float32Array[], neg: Float32Array[]): number {
  const sim = (e: Float32Array) => (row.distance === 'euclid' ? -exactScore(row.distance, v, e) : exactScore(row.distance, v, e));
  if (strategy === 'sum_scores') return pos.reduce((s, e) => s + sim(e), 0) - neg.reduce((s, e) => s + sim(e), 0);
  const bestPos = pos.length ? Math.max(...pos.map(sim)) : -Infinity;
  const bestNeg = neg.length ? Math.max(...neg.map(sim)) : -Infinity;
  return bestPos > bestNeg ? bestPos : -(bestNeg * bestNeg);
}

/** Exact scan over every stored (and accepted) point with a custom score, best first. */
function scanScored(
  rt: VectorRuntime,
  row: IndexRow,
  filter: unknown,
  score: (v: Float32Array) => number,
  o: { limit: number; offset: number; score_threshold?: number | null; with_payload: boolean; with_vector: boolean },
): ScoredPoint[] {
  const pred = requestFilter(filter);
  const scored: Array<{ key: string; score: number; payload: Record<string, unknown>; vector: Float32Array }> = [];
  for (const p of rt.store.iteratePoints(row.id)) {
    const payload = JSON.parse(p.payload) as Record<string, unknown>;
    if (pred && !pred(payload, p.id_key)) continue;
    const vector = fromBlob(p.vector);
    const s = score(vector);
    // Custom scores are "higher is better" whatever the distance.
    if (o.score_threshold != null && !passesThreshold('dot', s, o.score_threshold)) continue;
    scored.push({ key: p.id_key, score: s, payload, vector });
  }
  scored.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1));
  return scored.slice(o.offset, o.offset + o.limit).map((p) => ({
    id: idFromKey(p.key),
    score: p.score,
    ...(o.with_payload ? { payload: p.payload } : {}),
    ...(o.with_vector ? { vector: Array.from(p.vector) } : {}),
  }));
}
