/**
 * The library choice of issue 6, measured: native hnswlib-node, usearch (one thread and two, fed
 * in batches of 1000 as upserts arrive) and our own JavaScript HNSW, first over float32 (the
 * graph behind quantization none), then over int8 codes (the graph behind scalar). Each builds
 * the same vectors with the engine's parameters and answers the same queries; recall is the
 * graph's own, before any rescoring.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { CodeAnn, HnswlibAnn, makeAnn } from '../src/daemon/services/vector/ann.js';
import { CODE_GRAPH, FLOAT_GRAPH } from '../src/daemon/services/vector/graph-params.js';
import { FloatCodes } from '../src/daemon/services/vector/quantization.js';
import { percentile } from './lib.js';

// usearch's ESM entry fails to locate its binary under Node 20; the CommonJS one works.
const usearch = createRequire(import.meta.url)('usearch') as typeof import('usearch');

interface Contender {
  /** Adds rows [from, to) of the base set. */
  add(base: Float32Array, from: number, to: number): void;
  search(q: Float32Array, k: number): number[];
}

const BATCH = 1000;
const K = 10;

function perPoint(dims: number, ann: { add(slot: number, v: Float32Array): void; search(q: Float32Array, k: number, ef: number): Array<{ id: number }> }, ef: number): Contender {
  return {
    add: (base, from, to) => {
      for (let i = from; i < to; i++) ann.add(i, base.subarray(i * dims, (i + 1) * dims));
    },
    search: (q, k) => ann.search(q, k, ef).map((r) => r.id),
  };
}

function usearchIndex(dims: number, quantization: 'f32' | 'i8', graph: { m: number; efConstruction: number }, ef: number, threads: number): Contender {
  const index = new usearch.Index({
    dimensions: dims,
    metric: usearch.MetricKind.Cos,
    quantization: quantization === 'f32' ? usearch.ScalarKind.F32 : usearch.ScalarKind.I8,
    connectivity: graph.m,
    expansion_add: graph.efConstruction,
    expansion_search: ef,
    multi: false,
  });
  return {
    add: (base, from, to) => {
      const keys = BigUint64Array.from({ length: to - from }, (_, i) => BigInt(from + i));
      index.add(keys, base.subarray(from * dims, to * dims), threads);
    },
    search: (q, k) => Array.from(index.search(q, k, 1).keys, Number),
  };
}

export function compareLibraries(base: Float32Array, queries: Float32Array, dims: number, n: number, truth: number[][], ef: number) {
  const sample = Array.from({ length: Math.min(n, 1000) }, (_, i) => base.subarray(i * dims, (i + 1) * dims));
  const contenders: Array<[string, () => Contender]> = [
    ['float32: hnswlib-node', () => perPoint(dims, new HnswlibAnn(dims, 'cosine', n), ef)],
    ['float32: usearch, 1 thread', () => usearchIndex(dims, 'f32', FLOAT_GRAPH, ef, 1)],
    ['float32: usearch, 2 threads', () => usearchIndex(dims, 'f32', FLOAT_GRAPH, ef, 2)],
    ['float32: own HNSW (JS)', () => perPoint(dims, new CodeAnn('hnsw-float', new FloatCodes(dims, 'cosine', n)), ef)],
    ['int8: own HNSW (JS, the scalar engine)', () => perPoint(dims, makeAnn({ dims, distance: 'cosine', quantization: 'scalar', sample, capacity: n }), ef)],
    ['int8: usearch, 1 thread', () => usearchIndex(dims, 'i8', CODE_GRAPH, ef, 1)],
    ['int8: usearch, 2 threads', () => usearchIndex(dims, 'i8', CODE_GRAPH, ef, 2)],
  ];
  const nq = queries.length / dims;
  return contenders.map(([label, make]) => {
    const c = make();
    const t0 = performance.now();
    for (let from = 0; from < n; from += BATCH) c.add(base, from, Math.min(n, from + BATCH));
    const buildS = (performance.now() - t0) / 1000;
    const lat: number[] = [];
    let hits = 0;
    for (let qi = 0; qi < nq; qi++) {
      const t = performance.now();
      const found = c.search(queries.subarray(qi * dims, (qi + 1) * dims), K);
      lat.push(performance.now() - t);
      const want = new Set(truth[qi]);
      hits += found.filter((id) => want.has(id)).length;
    }
    return { label, buildS, pointsPerS: n / buildS, p50: percentile(lat, 50), recall: hits / (K * nq) };
  });
}
