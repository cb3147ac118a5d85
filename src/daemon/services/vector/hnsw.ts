import { grown } from './capacity.js';
import { Heap } from './heap.js';
import type { CodeSpace } from './quantization.js';

/** Scalars of a saved graph; its arrays travel as sections. */
export interface HnswStateMeta {
  m: number;
  efConstruction: number;
  entry: number;
  maxLevel: number;
  rngState: number;
  live: number;
}

/** An aligned copy of a section, for typed-array views wider than a byte. */
const copyBuffer = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

export interface HnswParams {
  m: number;
  efConstruction: number;
  seed?: number;
  /** On link overflow, prune with the diversity heuristic (as hnswlib does) instead of keeping the closest. */
  pruneOverflow?: boolean;
}

/**
 * Hierarchical navigable small world graph (Malkov and Yashunin) over a CodeSpace, so the graph
 * can navigate int8 or binary codes instead of floats. hnswlib-node only stores float32 vectors,
 * which would defeat quantization's memory saving; for unquantized indexes the engine uses
 * hnswlib (native, faster), and the benchmark compares the two.
 */
export class Hnsw {
  private readonly m0: number;
  private readonly mL: number;
  /** Level-0 links: per slot [count, n1..nM0]. */
  private links0: Int32Array;
  private upper = new Map<number, Int32Array[]>();
  private levels: Uint8Array;
  private deleted: Uint8Array;
  private visited: Uint32Array;
  private epoch = 0;
  private entry = -1;
  private maxLevel = -1;
  private rng: () => number;
  private rngState: number;
  private live = 0;

  constructor(
    readonly space: CodeSpace,
    readonly params: HnswParams = { m: 16, efConstruction: 100 },
  ) {
    this.m0 = params.m * 2;
    this.mL = 1 / Math.log(params.m);
    const cap = space.capacity();
    this.links0 = new Int32Array(cap * (this.m0 + 1));
    this.levels = new Uint8Array(cap);
    this.deleted = new Uint8Array(cap);
    this.visited = new Uint32Array(cap);
    this.rngState = params.seed ?? 42;
    this.rng = () => {
      // mulberry32: deterministic levels make builds reproducible.
      const s = (this.rngState = (this.rngState + 0x6d2b79f5) | 0);
      let t = Math.imul(s ^ (s >>> 15), 1 | s);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  get count() {
    return this.live;
  }

  /** Everything needed to restore the graph (the code space saves its codes separately). */
  exportState(): { meta: HnswStateMeta; sections: ArrayBufferView[] } {
    const cap = this.space.capacity();
    const upper: number[] = [];
    for (let slot = 0; slot < cap; slot++) for (const l of this.upper.get(slot) ?? []) upper.push(...l);
    return {
      meta: { m: this.params.m, efConstruction: this.params.efConstruction, entry: this.entry, maxLevel: this.maxLevel, rngState: this.rngState, live: this.live },
      sections: [this.links0, this.levels, this.deleted, Int32Array.from(upper)],
    };
  }

  /** A graph from `exportState` over a space restored to the same capacity. */
  static restore(space: CodeSpace, params: HnswParams, meta: HnswStateMeta, sections: Uint8Array[]): Hnsw {
    const g = new Hnsw(space, params);
    const [links0, levels, deleted, upper] = sections as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    const cap = space.capacity();
    if (links0.byteLength !== cap * (g.m0 + 1) * 4 || levels.byteLength !== cap || deleted.byteLength !== cap) {
      throw new Error('graph sections do not match the code space');
    }
    g.links0.set(new Int32Array(copyBuffer(links0)));
    g.levels.set(levels);
    g.deleted.set(deleted);
    const up = new Int32Array(copyBuffer(upper));
    let o = 0;
    for (let slot = 0; slot < cap; slot++) {
      const n = g.levels[slot]!;
      if (n === 0) continue;
      const ls: Int32Array[] = [];
      for (let l = 0; l < n; l++, o += params.m + 1) ls.push(up.slice(o, o + params.m + 1));
      g.upper.set(slot, ls);
    }
    if (o !== up.length) throw new Error('graph upper links do not match the levels');
    g.entry = meta.entry;
    g.maxLevel = meta.maxLevel;
    g.rngState = meta.rngState;
    g.live = meta.live;
    return g;
  }

  /** Bytes held: codes plus links (level 0 and upper levels). */
  bytes(): number {
    let upper = 0;
    for (const ls of this.upper.values()) for (const l of ls) upper += l.byteLength;
    const cap = this.space.capacity();
    return cap * this.space.bytesPerVector + this.links0.byteLength + upper + cap * 6;
  }

  private ensure(slot: number) {
    let cap = this.space.capacity();
    if (slot < cap) return;
    cap = grown(cap, slot);
    this.space.grow(cap);
    const l0 = new Int32Array(cap * (this.m0 + 1));
    l0.set(this.links0);
    this.links0 = l0;
    for (const name of ['levels', 'deleted'] as const) {
      const a = new Uint8Array(cap);
      a.set(this[name]);
      this[name] = a;
    }
    this.visited = new Uint32Array(cap);
    this.epoch = 0;
  }

  private neighbors(slot: number, level: number): Int32Array {
    if (level === 0) {
      const o = slot * (this.m0 + 1);
      return this.links0.subarray(o + 1, o + 1 + this.links0[o]!);
    }
    const l = this.upper.get(slot)![level - 1]!;
    return l.subarray(1, 1 + l[0]!);
  }

  private setNeighbors(slot: number, level: number, ids: number[]) {
    if (level === 0) {
      const o = slot * (this.m0 + 1);
      this.links0[o] = ids.length;
      for (let k = 0; k < ids.length; k++) this.links0[o + 1 + k] = ids[k]!;
      return;
    }
    const l = this.upper.get(slot)![level - 1]!;
    l[0] = ids.length;
    for (let k = 0; k < ids.length; k++) l[1 + k] = ids[k]!;
  }

  private nextEpoch() {
    if (++this.epoch === 0xffffffff) {
      this.visited.fill(0);
      this.epoch = 1;
    }
    return this.epoch;
  }

  /** Greedy descent from the entry point through the layers above `level`: the closest node found. */
  private descend(prep: unknown, level: number): number {
    let cur = this.entry;
    let curD = this.space.distQ(prep, cur);
    for (let l = this.maxLevel; l > level; l--) {
      let changed = true;
      while (changed) {
        changed = false;
        for (const n of this.neighbors(cur, l)) {
          const d = this.space.distQ(prep, n);
          if (d < curD) {
            curD = d;
            cur = n;
            changed = true;
          }
        }
      }
    }
    return cur;
  }

  /**
   * Best-first search of one layer. For queries (`live`), only accepted, live slots enter the
   * result, while traversal still walks through the others (as hnswlib does for filters and
   * deletions). Insertion links to deleted nodes too, as hnswlib does: they keep routing, and a
   * graph whose entry point was deleted would otherwise leave every new node without links.
   */
  private searchLayer(prep: unknown, eps: number[], ef: number, level: number, live: boolean, accept?: (slot: number) => boolean): Heap {
    const epoch = this.nextEpoch();
    const cand = new Heap(false);
    const res = new Heap(true);
    const ok = (s: number) => !live || (!this.deleted[s] && (!accept || accept(s)));
    for (const ep of eps) {
      const d = this.space.distQ(prep, ep);
      this.visited[ep] = epoch;
      cand.push(d, ep);
      if (ok(ep)) res.push(d, ep);
    }
    while (cand.size) {
      const cd = cand.topDist();
      const c = cand.topId();
      if (res.size >= ef && cd > res.topDist()) break;
      cand.pop();
      const ns = this.neighbors(c, level);
      for (let k = 0; k < ns.length; k++) {
        const n = ns[k]!;
        if (this.visited[n] === epoch) continue;
        this.visited[n] = epoch;
        const d = this.space.distQ(prep, n);
        if (res.size < ef || d < res.topDist()) {
          cand.push(d, n);
          if (ok(n)) {
            res.push(d, n);
            if (res.size > ef) res.pop();
          }
        }
      }
    }
    return res;
  }

  /** The heuristic of the paper (algorithm 4): keep candidates closer to the node than to kept ones. */
  private select(cands: Array<{ dist: number; id: number }>, m: number, fill = true): number[] {
    cands.sort((a, b) => a.dist - b.dist);
    const kept: number[] = [];
    for (const c of cands) {
      if (kept.length >= m) break;
      let good = true;
      for (const k of kept) {
        if (this.space.distSS(c.id, k) < c.dist) {
          good = false;
          break;
        }
      }
      if (good) kept.push(c.id);
    }
    // Fill up with the nearest pruned ones so sparse regions stay connected.
    if (fill && kept.length < m) for (const c of cands) if (kept.length < m && !kept.includes(c.id)) kept.push(c.id);
    return kept;
  }

  add(slot: number, v: Float32Array): void {
    this.ensure(slot);
    this.space.set(slot, v);
    this.deleted[slot] = 0;
    this.live++;
    const level = Math.min(31, Math.floor(-Math.log(1 - this.rng()) * this.mL));
    this.levels[slot] = level;
    this.setNeighbors(slot, 0, []);
    if (level > 0) {
      this.upper.set(
        slot,
        Array.from({ length: level }, () => new Int32Array(this.params.m + 1)),
      );
    }
    if (this.entry < 0) {
      this.entry = slot;
      this.maxLevel = level;
      return;
    }
    const prep = this.space.prepare(v);
    let eps = [this.descend(prep, level)];
    for (let l = Math.min(level, this.maxLevel); l >= 0; l--) {
      const found = this.searchLayer(prep, eps, this.params.efConstruction, l, false).entries();
      const mMax = l === 0 ? this.m0 : this.params.m;
      const chosen = this.select(found.filter((f) => f.id !== slot), this.params.m);
      this.setNeighbors(slot, l, chosen);
      for (const n of chosen) {
        const ns = Array.from(this.neighbors(n, l));
        if (ns.length < mMax) {
          ns.push(slot);
          this.setNeighbors(n, l, ns);
        } else {
          const all = [...ns, slot].map((id) => ({ id, dist: this.space.distSS(n, id) }));
          if (this.params.pruneOverflow) {
            this.setNeighbors(n, l, this.select(all, mMax, false));
          } else {
            all.sort((a, b) => a.dist - b.dist);
            this.setNeighbors(n, l, all.slice(0, mMax).map((x) => x.id));
          }
        }
      }
      eps = found.map((f) => f.id);
    }
    if (level > this.maxLevel) {
      this.maxLevel = level;
      this.entry = slot;
    }
  }

  /** Marks a slot deleted: it still routes searches but is never returned. */
  remove(slot: number): void {
    if (slot < this.deleted.length && !this.deleted[slot]) {
      this.deleted[slot] = 1;
      this.live--;
    }
  }

  search(q: Float32Array, k: number, ef: number, accept?: (slot: number) => boolean): Array<{ id: number; dist: number }> {
    if (this.entry < 0) return [];
    const prep = this.space.prepare(q);
    const res = this.searchLayer(prep, [this.descend(prep, 0)], Math.max(ef, k), 0, true, accept).entries();
    res.sort((a, b) => a.dist - b.dist);
    return res.slice(0, k);
  }
}
