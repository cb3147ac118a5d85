import type { Distance } from '../../../api/vector.js';

/**
 * Scores follow Qdrant's conventions: cosine vectors are normalized on write and scored by dot
 * product (cosine similarity, higher is better); dot is the raw dot product (higher is better);
 * euclid reports the L2 distance itself (lower is better, results sorted ascending, and
 * score_threshold is an upper bound).
 */
export const higherIsBetter = (d: Distance) => d !== 'euclid';

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export function squaredL2(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    s += d * d;
  }
  return s;
}

/** Unit-length copy (Qdrant stores cosine vectors normalized); a zero vector stays zero. */
export function normalized(v: ArrayLike<number>): Float32Array {
  // A float32 source is copied whole (a memcpy); Float32Array.from walks any array-like element by element.
  const out = v instanceof Float32Array ? v.slice() : Float32Array.from(v as ArrayLike<number>);
  const n = Math.sqrt(dot(out, out));
  if (n > 0) for (let i = 0; i < out.length; i++) out[i]! /= n;
  return out;
}

/** The vector as stored for a distance: normalized for cosine, as given otherwise. */
export const storedForm = (d: Distance, v: ArrayLike<number>): Float32Array =>
  d === 'cosine' ? normalized(v) : v instanceof Float32Array ? v.slice() : Float32Array.from(v as ArrayLike<number>);

/**
 * Exact score of a stored vector against a query already in stored form, as a float32 like every
 * score the engine reports (Qdrant's scores are f32): the graph computes in float32 and a scan in
 * float64, and a query must score the same whichever plan answers it (before and after a restart
 * that reloads the graph, say).
 */
export function exactScore(d: Distance, stored: Float32Array, query: Float32Array): number {
  return Math.fround(d === 'euclid' ? Math.sqrt(squaredL2(stored, query)) : dot(stored, query));
}

/** Orders by score, best first; ties break on the point's sort key so results are deterministic. */
export function compareScored(d: Distance) {
  const sign = higherIsBetter(d) ? -1 : 1;
  return (a: { score: number; key: string }, b: { score: number; key: string }) =>
    a.score !== b.score ? sign * (a.score - b.score) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Whether a score passes score_threshold: a floor for similarities, a ceiling for distances. */
export const passesThreshold = (d: Distance, score: number, threshold: number | undefined) =>
  threshold === undefined || (higherIsBetter(d) ? score >= threshold : score <= threshold);

export const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
export function fromBlob(b: Buffer): Float32Array {
  // Copy: better-sqlite3 buffers may not be 4-byte aligned.
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}
