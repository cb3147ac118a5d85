/**
 * Graph-only probe of the int8 HNSW (issue 6 follow-up): builds our Hnsw over scalar codes on the
 * benchmark data set, then sweeps the search beam (ef) with float rescoring in RAM (no SQLite), so
 * graph quality is measured apart from storage.
 * Run: npx tsx bench/vector-graph.ts [n] [m] [efConstruction] [keep] (keep: overflow keeps the closest links)
 */
import { dataset, bruteForce } from './vector-data.js';
import { CODE_GRAPH } from '../src/daemon/services/vector/graph-params.js';
import { Hnsw } from '../src/daemon/services/vector/hnsw.js';
import { ScalarCodes } from '../src/daemon/services/vector/quantization.js';
const n = Number(process.argv[2] ?? 30000), dims = 768, nq = 100;
const m = Number(process.argv[3] ?? CODE_GRAPH.m);
const efc = Number(process.argv[4] ?? CODE_GRAPH.efConstruction);
const prune = process.argv[5] !== 'keep';
const { base, queries } = dataset(n, nq, dims);
const row = (d: Float32Array, i: number) => d.subarray(i * dims, (i + 1) * dims);
const truth = Array.from({ length: nq }, (_, i) => bruteForce(base, dims, row(queries, i)));
const sample = Array.from({ length: 1000 }, (_, i) => row(base, Math.floor(i * n / 1000)));
const { lo, hi } = ScalarCodes.bounds(sample, 0.99);
const g = new Hnsw(new ScalarCodes(dims, 'cosine', lo, hi, n), { m, efConstruction: efc, pruneOverflow: prune });
const t0 = performance.now();
for (let i = 0; i < n; i++) g.add(i, row(base, i));
console.log(`n=${n} m=${m} efc=${efc} prune=${prune} build ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const dot = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < dims; i++) s += a[i]! * b[i]!; return s; };
for (const ef of [64, 128, 256, 512]) {
  let hit = 0; const lat: number[] = [];
  for (let qi = 0; qi < nq; qi++) {
    const q = row(queries, qi);
    const t = performance.now();
    const found = g.search(q, 40, ef);
    const top = found.map((f) => ({ id: f.id, s: dot(q, row(base, f.id)) })).sort((a, b) => b.s - a.s).slice(0, 10);
    lat.push(performance.now() - t);
    const want = new Set(truth[qi]);
    hit += top.filter((x) => want.has(x.id)).length;
  }
  lat.sort((a, b) => a - b);
  console.log(`  ef=${ef} recall@10=${(hit / (nq * 10)).toFixed(4)} p50=${lat[nq >> 1]!.toFixed(2)} ms (graph+rescore in RAM)`);
}
