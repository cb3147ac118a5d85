import hnswlib from 'hnswlib-node';
import type { Distance, QuantizationKind } from '../../../api/vector.js';
import { Hnsw, type HnswStateMeta } from './hnsw.js';
import { CODE_GRAPH, FLOAT_GRAPH } from './graph-params.js';
import { grown } from './capacity.js';
import { GraphHold } from './graph-hold.js';
import { FloatTail } from './exact-tail.js';
import { OffThreadBuild, type OffThreadSettings } from './off-thread-build.js';
import { BinaryCodes, FloatCodes, ScalarCodes, type CodeSpace } from './quantization.js';

/** An approximate nearest-neighbour index over slots; distances are "smaller is closer". */
export interface Ann {
  readonly label: string;
  /** Whether distances are exact enough to report as scores (floats) or need float rescoring (codes). */
  readonly exactDistances: boolean;
  add(slot: number, v: Float32Array): void;
  /** Adds a point beside the graph, searched exactly until `build` inserts it (see GraphHold). */
  enqueue(slot: number, v: Float32Array): void;
  /** Inserts waiting points for about `budgetMs`; true while some remain. */
  build(budgetMs: number): boolean;
  /** Points added but not yet in the graph. */
  readonly waiting: number;
  waitingSlots(): Iterable<number>;
  /** Whether a write holds the graph still (a save, or a build worker's seed): no save can start. */
  readonly held: boolean;
  /**
   * Builds the graph in a worker thread from now on (float graphs; code graphs keep building on
   * the event loop and ignore this). `onAdvance` is called when the graph took points.
   */
  buildOffThread?(settings: OffThreadSettings & { name: string; onAdvance: () => void }): void;
  /** Settles once the points waiting now are in the graph (at once when `build` inserts them on the event loop). */
  whenBuilt(): Promise<void>;
  /** Ends a build worker, if any. */
  close(): void;
  remove(slot: number): void;
  search(q: Float32Array, k: number, ef: number, accept?: (slot: number) => boolean): Array<{ id: number; dist: number }>;
  /** Bytes the index holds in memory (vectors or codes plus graph links). */
  bytes(): number;
  /** The float vector of a slot when the index holds floats; undefined when it holds only codes. */
  floatVector(slot: number): Float32Array | undefined;
  /** Approximate distances of given slots (codes), for scans that skip the graph. */
  distances(q: Float32Array, slots: number[]): number[];
  /**
   * The index as a JSON description plus binary sections for a saved graph. hnswlib writes its
   * own file, at `sidecar`, which the description names.
   */
  save(sidecar: string, opts?: { keepWaiting?: boolean }): SavedAnn;
}

/** What `restoreAnn` needs to rebuild an index from a saved graph without reinserting. */
export type AnnMeta =
  | { kind: 'hnswlib'; m: number; efConstruction: number; sidecar: string; live: number }
  | { kind: 'hnsw-int8'; lo: number; hi: number; capacity: number; graph: HnswStateMeta }
  | { kind: 'hnsw-binary'; capacity: number; graph: HnswStateMeta };

/**
 * A save in progress. The graph is held still (see GraphHold) until `release`, which the saver
 * calls once it has written the sections, or given up (hnswlib ends its hold when `written` settles).
 */
export interface SavedAnn {
  meta: AnnMeta;
  /** Live arrays of the graph: read them before `release`. */
  sections: ArrayBufferView[];
  /** Settles once hnswlib's own file (at the sidecar path) is fully written. */
  written?: Promise<void>;
  release(): void;
}

const CODE_PARAMS = { ...CODE_GRAPH, pruneOverflow: true };

/**
 * hnswlib-node (native hnswlib) for float vectors. Its spaces: `ip` gives 1 - dot, `cosine` the
 * same after normalizing, `l2` the squared distance; the engine converts these to Qdrant scores.
 */
export class HnswlibAnn implements Ann {
  readonly label = 'hnswlib';
  readonly exactDistances = true;
  private index: hnswlib.HierarchicalNSW;
  private capacity: number;
  private live = 0;
  /** hnswlib writes its file in the thread pool, and the native index must not change meanwhile. */
  private readonly hold: GraphHold;
  private offThread?: OffThreadBuild;

  constructor(
    private readonly dims: number,
    private readonly distance: Distance,
    cap = 1024,
  ) {
    this.capacity = cap;
    // Vectors arrive already normalized for cosine, so inner product is enough.
    this.index = new hnswlib.HierarchicalNSW(distance === 'euclid' ? 'l2' : 'ip', dims);
    this.index.initIndex({ maxElements: cap, m: FLOAT_GRAPH.m, efConstruction: FLOAT_GRAPH.efConstruction, randomSeed: 42 });
    this.hold = new GraphHold(
      { insert: (slot, v) => this.insert(slot, v), delete: (slot) => this.index.markDelete(slot), distanceTo: (q, v) => this.hnswDistance(v, q) },
      new FloatTail(distance === 'euclid' ? 'l2' : 'ip', dims),
    );
  }
  add(slot: number, v: Float32Array) {
    this.live++;
    this.hold.add(slot, v);
  }
  enqueue(slot: number, v: Float32Array) {
    this.live++;
    this.hold.enqueue(slot, v);
    this.offThread?.enqueued(slot, v);
  }
  build(budgetMs: number) {
    if (this.offThread && !this.offThread.onEventLoop) {
      // The worker inserts; the event loop only sends it what waits.
      this.offThread.flush();
      return false;
    }
    return this.hold.build(budgetMs);
  }
  buildOffThread(settings: OffThreadSettings & { name: string; onAdvance: () => void }) {
    const ann = this;
    this.offThread ??= new OffThreadBuild(
      {
        get graph() {
          return ann.index;
        },
        hold: this.hold,
        replace: (next, settled) => {
          const old = this.index;
          this.index = next;
          this.capacity = next.getMaxElements();
          for (const slot of settled) this.hold.settle(slot);
          // hnswlib-node does not tell V8 what a graph holds, so a dropped one would keep its memory
          // until a full collection (16,384 x 768: peak RSS 688 MiB against 495 before this change);
          // a new tiny index frees it now. Nothing else uses it: swaps wait for saves and seeds.
          old.initIndex({ maxElements: 1, m: 2, efConstruction: 2 });
        },
      },
      { ...settings, space: this.distance === 'euclid' ? 'l2' : 'ip', dims: this.dims },
    );
  }
  whenBuilt() {
    return this.offThread?.whenBuilt() ?? Promise.resolve();
  }
  close() {
    this.offThread?.close();
  }
  get held() {
    return this.hold.isHeld;
  }
  get waiting() {
    return this.hold.waitingCount;
  }
  waitingSlots() {
    return this.hold.waitingSlots();
  }
  private insert(slot: number, v: Float32Array) {
    if (slot >= this.capacity) {
      this.capacity = grown(this.capacity, slot);
      this.index.resizeIndex(this.capacity);
    }
    this.index.addPoint(Array.from(v), slot);
  }
  remove(slot: number) {
    this.live--;
    this.hold.remove(slot);
    this.offThread?.removed(slot);
  }
  search(q: Float32Array, k: number, ef: number, accept?: (slot: number) => boolean) {
    if (this.live === 0) return [];
    return this.hold.search(q, k, accept, (filter) => {
      if (this.index.getCurrentCount() === 0) return [];
      this.index.setEf(Math.max(ef, k));
      const r = this.index.searchKnn(Array.from(q), Math.min(k, this.capacity), filter);
      return r.neighbors.map((id, i) => ({ id, dist: r.distances[i]! }));
    });
  }
  /** hnswlib's distance for its space: 1 - dot for `ip`, the squared distance for `l2`. */
  private hnswDistance(v: Float32Array, q: Float32Array): number {
    let s = 0;
    if (this.distance === 'euclid') {
      for (let i = 0; i < v.length; i++) s += (v[i]! - q[i]!) ** 2;
      return s;
    }
    for (let i = 0; i < v.length; i++) s += v[i]! * q[i]!;
    return 1 - s;
  }
  /** getPoint copies through a JS array (about 40 µs at 64 dimensions): slower than SQLite, so unused. */
  floatVector(): undefined {
    return undefined;
  }
  distances(): number[] {
    throw new Error('hnswlib holds floats: scan the stored vectors instead');
  }
  /** Starts hnswlib's write in the thread pool; `written` settles when the file is whole, ending the hold. */
  save(sidecar: string, opts: { keepWaiting?: boolean } = {}): SavedAnn {
    // The file holds the points in the graph; the save's keys leave out those still waiting beside it.
    const releaseHold = this.hold.begin(opts);
    // A snapshot that arrived during the write is swapped in once the graph is free.
    const release = () => {
      releaseHold();
      this.offThread?.applyPending();
    };
    const live = this.live - this.hold.waitingCount;
    let written: Promise<void>;
    try {
      written = this.index.writeIndex(sidecar).then(() => undefined);
    } catch (e) {
      release();
      throw e;
    }
    return { meta: { kind: 'hnswlib', ...FLOAT_GRAPH, sidecar, live }, sections: [], written: written.finally(release), release };
  }
  static restore(dims: number, distance: Distance, meta: Extract<AnnMeta, { kind: 'hnswlib' }>): HnswlibAnn {
    const ann = new HnswlibAnn(dims, distance, 16);
    ann.index.readIndexSync(meta.sidecar);
    ann.capacity = ann.index.getMaxElements();
    ann.live = meta.live;
    return ann;
  }
  bytes() {
    // hnswlib's layout: per element, level-0 links (2M + 1 ints), the float vector and an 8-byte
    // label; upper levels hold about 1/M of the elements with M + 1 ints each, plus a lock.
    const m = FLOAT_GRAPH.m;
    const perElement = (2 * m + 1) * 4 + this.dims * 4 + 8 + ((m + 1) * 4) / m + 16;
    return Math.round(this.capacity * perElement);
  }
}

/** Our own HNSW over quantized codes (or floats, for the benchmark's comparison). */
export class CodeAnn implements Ann {
  readonly exactDistances: boolean;
  readonly graph: Hnsw;
  /** The graph's arrays are written by the thread pool during a save and must not change meanwhile. */
  private readonly hold: GraphHold;
  constructor(
    readonly label: string,
    space: CodeSpace,
    graph?: Hnsw,
  ) {
    // hnswlib's overflow pruning: at 100,000 int8 vectors it lifted recall@10 from 0.980 to 0.996 (ef 192) at the same build time.
    const g = (this.graph = graph ?? new Hnsw(space, CODE_PARAMS));
    this.exactDistances = space instanceof FloatCodes;
    this.hold = new GraphHold({
      insert: (slot, v) => g.add(slot, v),
      delete: (slot) => g.remove(slot),
      distanceTo: (q, v) => g.space.distFloat(q, v),
    });
  }
  add(slot: number, v: Float32Array) {
    this.hold.add(slot, v);
  }
  enqueue(slot: number, v: Float32Array) {
    this.hold.enqueue(slot, v);
  }
  build(budgetMs: number) {
    return this.hold.build(budgetMs);
  }
  whenBuilt() {
    return Promise.resolve();
  }
  close() {}
  get held() {
    return this.hold.isHeld;
  }
  get waiting() {
    return this.hold.waitingCount;
  }
  waitingSlots() {
    return this.hold.waitingSlots();
  }
  remove(slot: number) {
    this.hold.remove(slot);
  }
  search(q: Float32Array, k: number, ef: number, accept?: (slot: number) => boolean) {
    // The same beam as floats: with M 24 / efConstruction 256 a beam of 128 gave recall@10 0.9995 at
    // 100,000 int8 vectors (the M 16 graph needed twice the beam; docs/decisions/vector.md).
    return this.hold.search(q, k, accept, (filter) => this.graph.search(q, k, ef, filter));
  }
  bytes() {
    return this.graph.bytes();
  }
  /** The graph's arrays as they are, held still until the saver releases them. */
  save(_sidecar = '', opts: { keepWaiting?: boolean } = {}): SavedAnn {
    const release = this.hold.begin(opts);
    const space = this.graph.space;
    const { meta: graph, sections } = this.graph.exportState();
    const capacity = space.capacity();
    const meta: AnnMeta =
      space instanceof ScalarCodes ? { kind: 'hnsw-int8', lo: space.lo, hi: space.hi, capacity, graph } : { kind: 'hnsw-binary', capacity, graph };
    return { meta, sections: [...sections, ...space.exportCodes()], release };
  }
  floatVector(slot: number) {
    const space = this.graph.space;
    return space instanceof FloatCodes ? space.vector(slot) : undefined;
  }
  distances(q: Float32Array, slots: number[]) {
    const space = this.graph.space;
    const prep = space.prepare(q);
    return slots.map((s) => {
      const waiting = this.hold.waitingVector(s);
      return waiting ? space.distFloat(q, waiting) : space.distQ(prep, s);
    });
  }
}

/**
 * Builds the index for a quantization kind. Scalar bounds come from a calibration sample of the
 * vectors present when the index is (re)built; later points are clamped into them.
 */
export function makeAnn(opts: {
  dims: number;
  distance: Distance;
  quantization: QuantizationKind;
  quantile?: number;
  sample: Float32Array[];
  capacity: number;
}): Ann {
  const cap = Math.max(16, opts.capacity);
  switch (opts.quantization) {
    case 'none':
      return new HnswlibAnn(opts.dims, opts.distance, cap);
    case 'scalar': {
      const { lo, hi } = ScalarCodes.bounds(opts.sample, opts.quantile ?? 0.99);
      return new CodeAnn('hnsw-int8', new ScalarCodes(opts.dims, opts.distance, lo, hi, cap));
    }
    case 'binary':
      return new CodeAnn('hnsw-binary', new BinaryCodes(opts.dims, cap));
  }
}

/**
 * An index from a saved graph, without reinserting a point. Throws when the save does not fit
 * the index (another quantization or graph parameters): the caller then rebuilds.
 */
export function restoreAnn(opts: { dims: number; distance: Distance; quantization: QuantizationKind }, meta: AnnMeta, sections: Uint8Array[]): Ann {
  const expected = { none: 'hnswlib', scalar: 'hnsw-int8', binary: 'hnsw-binary' }[opts.quantization];
  if (meta.kind !== expected) throw new Error(`saved as ${meta.kind}, the index needs ${expected}`);
  if (meta.kind === 'hnswlib') {
    if (meta.m !== FLOAT_GRAPH.m || meta.efConstruction !== FLOAT_GRAPH.efConstruction) throw new Error('saved with other graph parameters');
    return HnswlibAnn.restore(opts.dims, opts.distance, meta);
  }
  if (meta.graph.m !== CODE_GRAPH.m || meta.graph.efConstruction !== CODE_GRAPH.efConstruction) throw new Error('saved with other graph parameters');
  const space =
    meta.kind === 'hnsw-int8' ? new ScalarCodes(opts.dims, opts.distance, meta.lo, meta.hi, meta.capacity) : new BinaryCodes(opts.dims, meta.capacity);
  const graphSections = sections.slice(0, 4);
  space.importCodes(sections.slice(4));
  return new CodeAnn(meta.kind, space, Hnsw.restore(space, CODE_PARAMS, meta.graph, graphSections));
}

/** hnswlib distance to Qdrant score (for float ANN results reported without rescoring), a float32 as `exactScore`'s. */
export function annDistanceToScore(distance: Distance, d: number): number {
  return Math.fround(distance === 'euclid' ? Math.sqrt(Math.max(0, d)) : 1 - d);
}
