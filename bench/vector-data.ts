import { rng } from '../test/vector/data.js';

/** The vector benches' shared data: a seeded clustered dataset and its exact answers. */
const K = 10;

/** N vectors (row-major, normalized for cosine: the engine's stored form) plus Q held-out queries. */
export function dataset(n: number, q: number, dims: number, seed = 7): { base: Float32Array; queries: Float32Array; clusters: Uint32Array } {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const clusters = Math.max(10, Math.round(n / 200));
  const rank = 24;
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, gauss));
  const directions = Array.from({ length: rank }, () => Float32Array.from({ length: dims }, () => gauss() / Math.sqrt(dims)));
  const out = new Float32Array((n + q) * dims);
  const clusterOf = new Uint32Array(n + q);
  for (let p = 0; p < n + q; p++) {
    clusterOf[p] = Math.floor(r() * clusters);
    const c = centres[clusterOf[p]!]!;
    const o = p * dims;
    for (let i = 0; i < dims; i++) out[o + i] = c[i]! * 0.08 + gauss() * 0.04;
    for (const dir of directions) {
      const w = gauss() * 0.6;
      for (let i = 0; i < dims; i++) out[o + i]! += w * dir[i]!;
    }
    let norm = 0;
    for (let i = 0; i < dims; i++) norm += out[o + i]! * out[o + i]!;
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < dims; i++) out[o + i]! /= norm;
  }
  return { base: out.subarray(0, n * dims), queries: out.subarray(n * dims), clusters: clusterOf };
}

/** Exact top-K by dot product (cosine on normalized vectors): the baseline. */
export function bruteForce(base: Float32Array, dims: number, q: Float32Array): number[] {
  const n = base.length / dims;
  const best: Array<{ i: number; s: number }> = [];
  let floor = -Infinity;
  for (let i = 0; i < n; i++) {
    const o = i * dims;
    let s = 0;
    for (let j = 0; j < dims; j++) s += base[o + j]! * q[j]!;
    if (best.length < K || s > floor) {
      best.push({ i, s });
      if (best.length > K) {
        best.sort((a, b) => b.s - a.s);
        best.length = K;
      }
      floor = best.length === K ? Math.min(...best.map((b) => b.s)) : -Infinity;
    }
  }
  return best.sort((a, b) => b.s - a.s).map((b) => b.i);
}
