import type { Distance, QuantizationKind } from '../../../api/vector.js';
import { annDistanceToScore, makeAnn, type Ann, type SavedAnn } from './ann.js';
import type { Payload, Predicate } from './filter.js';
import type { OffThreadSettings } from './off-thread-build.js';
import { compareScored, exactScore, fromBlob } from './scoring.js';
import type { VectorStore } from './store.js';

export interface EngineSettings {
  id: string;
  dims: number;
  distance: Distance;
  quantization: QuantizationKind;
  quantile?: number;
  payloadOnDisk: boolean;
  /**
   * Upserted points wait beside the graph (searched exactly) until `buildGraph` inserts them, and
   * `onPending` is called so the owner schedules that; otherwise they enter the graph at once (tests
   * and benchmarks of the graph itself).
   */
  buildInBackground?: boolean;
  onPending?: () => void;
  /**
   * With `buildInBackground`: float graphs are built by a worker thread (off-thread-build.ts),
   * `onPending` being called again whenever the graph took points; code graphs still build in
   * `buildGraph`'s slices on the event loop.
   */
  offThread?: OffThreadSettings;
}

export interface PlannerSettings {
  /** Indexes with at most this many points are searched exactly (a scan beats the graph there). */
  exactMaxPoints: number;
  /** A filter expected to leave at most this many candidates is answered by an exact scan. */
  exactMaxCandidates: number;
  /** Graph search breadth (hnsw ef) before oversampling. */
  ef: number;
  /**
   * The beam grows from `ef` at half this many points to twice `ef` at this many: a larger graph
   * needs a wider beam for the same recall (hnswlib at 500,000 x 768: 0.942 at ef 128, 0.998 at 256).
   */
  wideEfFromPoints: number;
}

export interface Candidate {
  slot: number;
  key: string;
  score: number;
}

export interface SearchStats {
  plan: 'exact' | 'ann' | 'ann+fallback';
  candidates: number;
  /** The graph search beam, when the graph was searched. */
  ef?: number;
}

/** A graph saved earlier: the index, which key each slot held, and the write sequence it reflects. */
export interface SavedGraph {
  ann: Ann;
  keys: string[];
  seq: number;
}

/** Candidate oversampling before float rescoring: codes rank coarsely, binary the most. */
const OVERSAMPLE: Record<QuantizationKind, number> = { none: 1, scalar: 4, binary: 16 };
const SELECTIVITY_SAMPLE = 256;
/** Stored vectors read per SQLite statement while filling the graph at start. */
const FILL_CHUNK = 64;

/**
 * The in-memory side of one index: point keys by slot, the ANN graph and (unless payloads live on
 * disk) the payloads used by filters. SQLite holds the truth (float32 vectors and payloads); this
 * is rebuilt from it on start. Search plans between an exact scan and the graph by estimated
 * filter selectivity, and always reports exact scores from the stored floats.
 */
export class IndexEngine {
  private slotOf = new Map<string, number>();
  private keyOf: string[] = [];
  private payloads: Array<Payload | undefined> | undefined;
  private ann: Ann | undefined;
  private nextSlot = 0;
  /** Slots below `loadEnd` were loaded from SQLite at start; those below `graphFilled` are in the graph. */
  private loadEnd = 0;
  private graphFilled = 0;
  /** Graph insertions and removals since the load or the last save: what a restart would redo. */
  changes = 0;
  /** Whether the last save left out points waiting beside the graph (then the whole graph is saved once built). */
  lastSaveLeftOut = false;

  constructor(
    private s: EngineSettings,
    private readonly store: VectorStore,
    private readonly planner: PlannerSettings,
  ) {
    this.payloads = s.payloadOnDisk ? undefined : [];
  }

  get size() {
    return this.slotOf.size;
  }

  get annLabel() {
    return this.ann?.label ?? 'none yet';
  }

  memoryBytes() {
    return this.ann?.bytes() ?? 0;
  }

  /** Rebuilds from SQLite at once (tests and the benchmark; the daemon loads in slices). */
  load(): void {
    this.beginLoad();
    this.fillGraph(Infinity);
  }

  /**
   * Start-up, step one: keys and payloads from SQLite, so filters, scroll and exact scans work at
   * once. The graph is filled afterwards in slices (`fillGraph`); until it is whole, queries scan
   * the stored vectors exactly, so they are slower but never miss a point.
   */
  beginLoad(saved?: SavedGraph): void {
    if (saved) return this.beginFromSaved(saved);
    const count = this.store.countPoints(this.s.id);
    if (count > 0) {
      const sample: Float32Array[] = [];
      for (const r of this.store.iteratePoints(this.s.id)) {
        sample.push(fromBlob(r.vector));
        if (sample.length >= (this.s.quantization === 'scalar' ? 1000 : 1)) break;
      }
      // Sized for what is stored, so a rebuilt index holds no growth slack.
      this.setAnn(this.newAnn(sample, count));
    }
    for (const r of this.store.iterateKeysAndPayloads(this.s.id)) this.place(this.nextSlot++, r.id_key, r.payload);
    this.loadEnd = this.nextSlot;
  }

  /**
   * Start-up from a saved graph: slots whose point is unchanged since the save keep their place in
   * the graph; points deleted or rewritten since leave it, and rewritten or new points are filled
   * in like a rebuild's, so only what changed after the save is reinserted.
   */
  private beginFromSaved(saved: SavedGraph): void {
    this.setAnn(saved.ann);
    const savedSlot = new Map<string, number>();
    saved.keys.forEach((k, slot) => k && savedSlot.set(k, slot));
    this.nextSlot = saved.keys.length;
    this.keyOf = new Array<string>(this.nextSlot).fill('');
    const fresh: Array<{ key: string; payload: string; seq: number }> = [];
    for (const r of this.store.iterateKeysAndPayloads(this.s.id)) {
      const slot = savedSlot.get(r.id_key);
      if (slot === undefined || r.seq > saved.seq) {
        fresh.push({ key: r.id_key, payload: r.payload, seq: r.seq });
        continue;
      }
      savedSlot.delete(r.id_key);
      this.place(slot, r.id_key, r.payload);
    }
    for (const slot of savedSlot.values()) saved.ann.remove(slot);
    this.graphFilled = this.nextSlot;
    // Reinserted in write order, as the daemon that saved inserted them: in id order a point
    // rewritten after the save (often far from where it was) entered before the points the save
    // left waiting, linked only to the graph's old edge, and a search never reached it again.
    fresh.sort((a, b) => a.seq - b.seq);
    for (const f of fresh) this.place(this.nextSlot++, f.key, f.payload);
    this.loadEnd = this.nextSlot;
    this.changes = savedSlot.size;
  }

  private place(slot: number, key: string, payload: string): void {
    this.slotOf.set(key, slot);
    this.keyOf[slot] = key;
    if (this.payloads) this.payloads[slot] = JSON.parse(payload) as Payload;
  }

  /**
   * The graph for saving, with its keys by slot and the changes it covers (`changes` keeps only
   * the points still waiting; a failed save gives the rest back).
   */
  save(sidecar: string): { ann: SavedAnn; keys: string[]; changes: number } | undefined {
    if (!this.canSave) return undefined;
    // A background build's queue stays beside the graph during the save (inserting it all first
    // would hold the event loop); otherwise the graph takes the waiting points first.
    const ann = this.ann!.save(sidecar, { keepWaiting: this.s.buildInBackground });
    const keys = Array.from({ length: this.nextSlot }, (_, slot) => this.keyOf[slot] ?? '');
    // Points still waiting beside the graph are not in its file: a load reinserts them from SQLite.
    const waiting = this.ann!.waiting;
    for (const slot of this.ann!.waitingSlots()) keys[slot] = '';
    const changes = this.changes - waiting;
    this.changes = waiting;
    this.lastSaveLeftOut = waiting > 0;
    return { ann, keys, changes };
  }

  /**
   * Whether the graph can be saved: every loaded slot is in it (points written since may still
   * wait) and no other write holds it (a save, or a build worker's seed).
   */
  get canSave(): boolean {
    return this.ann !== undefined && this.fillComplete && !this.ann.held;
  }

  private setAnn(ann: Ann): void {
    this.ann = ann;
    const off = this.s.offThread;
    if (this.s.buildInBackground && off) ann.buildOffThread?.({ ...off, name: this.s.id, onAdvance: () => this.s.onPending?.() });
  }

  /**
   * Finishes the graph (a graceful stop): the loaded slots and, on the event loop, what a code graph
   * or a failed worker leaves; a float graph's worker inserts the rest and this waits for its snapshot.
   */
  async finishGraph(): Promise<void> {
    while (this.buildGraph(Infinity));
    await this.ann?.whenBuilt();
    while (this.buildGraph(Infinity));
  }

  /** Ends the index's build worker (the index is dropped or the daemon stops). */
  close(): void {
    this.ann?.close();
  }

  /** Step two: adds stored vectors of loaded slots to the graph for about `budgetMs`; true while some remain. */
  fillGraph(budgetMs: number): boolean {
    const started = performance.now();
    while (this.graphFilled < this.loadEnd) {
      const end = Math.min(this.loadEnd, this.graphFilled + FILL_CHUNK);
      // Slots emptied meanwhile (deleted or overwritten points) are skipped: they never enter the graph.
      const keys = this.keyOf.slice(this.graphFilled, end).filter(Boolean);
      const vectors = this.store.vectorsOf(this.s.id, keys);
      let slot = this.graphFilled;
      while (slot < end) {
        const blob = this.keyOf[slot] ? vectors.get(this.keyOf[slot]!) : undefined;
        if (blob) {
          this.ann!.add(slot, fromBlob(blob));
          this.changes++;
        }
        this.graphFilled = ++slot;
        // One insertion into a dense graph of large vectors takes milliseconds: check after each.
        if (blob && performance.now() - started >= budgetMs) return this.graphFilled < this.loadEnd;
      }
    }
    return false;
  }

  /**
   * Builds the graph for about `budgetMs`: loaded slots first, then points waiting since their
   * upsert; true while work remains that can be done now.
   */
  buildGraph(budgetMs: number): boolean {
    const started = performance.now();
    if (this.fillGraph(budgetMs)) return true;
    if (!this.ann) return false;
    return this.ann.build(Math.max(0, budgetMs - (performance.now() - started)));
  }

  /** Loaded points still to be inserted into the graph. */
  get pendingFill(): number {
    return this.loadEnd - this.graphFilled;
  }

  /** Points upserted but not yet in the graph (searched exactly meanwhile). */
  get waiting(): number {
    return this.ann?.waiting ?? 0;
  }

  /** Whether every loaded slot is in the graph: until then searches scan the stored vectors. */
  private get fillComplete(): boolean {
    return this.graphFilled >= this.loadEnd;
  }

  /** Whether every point is in the graph: loaded ones and those written since. */
  get graphComplete(): boolean {
    return this.fillComplete && this.waiting === 0;
  }

  /** Slots loaded at start but not yet filled are absent from the graph. */
  private inGraph(slot: number): boolean {
    return slot < this.graphFilled || slot >= this.loadEnd;
  }

  private newAnn(sample: Float32Array[], capacity: number): Ann {
    return makeAnn({ dims: this.s.dims, distance: this.s.distance, quantization: this.s.quantization, quantile: this.s.quantile, sample, capacity });
  }

  private addOne(key: string, v: Float32Array, payload: Payload | undefined): void {
    const old = this.slotOf.get(key);
    if (old !== undefined) {
      if (this.inGraph(old)) this.ann!.remove(old);
      this.keyOf[old] = '';
      if (this.payloads) this.payloads[old] = undefined;
    }
    const slot = this.nextSlot++;
    if (this.s.buildInBackground) this.ann!.enqueue(slot, v);
    else this.ann!.add(slot, v);
    this.changes++;
    this.slotOf.set(key, slot);
    this.keyOf[slot] = key;
    if (this.payloads) this.payloads[slot] = payload;
  }

  /** Applies committed upserts (vectors already in stored form). */
  upsert(points: Array<{ key: string; vector: Float32Array; payload: Payload }>): void {
    if (!this.ann) this.setAnn(this.newAnn(points.map((p) => p.vector), Math.max(1024, points.length)));
    for (const p of points) this.addOne(p.key, p.vector, p.payload);
    if (this.s.buildInBackground && points.length) this.s.onPending?.();
  }

  delete(keys: string[]): void {
    for (const k of keys) {
      const slot = this.slotOf.get(k);
      if (slot === undefined) continue;
      if (this.inGraph(slot)) this.ann!.remove(slot);
      this.changes++;
      this.slotOf.delete(k);
      this.keyOf[slot] = '';
      if (this.payloads) this.payloads[slot] = undefined;
    }
  }

  /** Switches payload storage live (PATCH payload_on_disk). */
  setPayloadOnDisk(onDisk: boolean): void {
    if (onDisk === this.s.payloadOnDisk) return;
    this.s = { ...this.s, payloadOnDisk: onDisk };
    if (onDisk) {
      this.payloads = undefined;
      return;
    }
    this.payloads = [];
    for (const [key, slot] of this.slotOf) this.payloads[slot] = JSON.parse(this.store.payloadOf(this.s.id, key) ?? '{}') as Payload;
  }

  /** A committed payload-only change of a stored point (its vector and graph slot stay). */
  replacePayload(key: string, payload: Payload): void {
    const slot = this.slotOf.get(key);
    if (this.payloads && slot !== undefined) this.payloads[slot] = payload;
  }

  has(key: string): boolean {
    return this.slotOf.has(key);
  }

  payloadOfKey(key: string): Payload {
    const slot = this.slotOf.get(key);
    if (this.payloads && slot !== undefined) return this.payloads[slot] ?? {};
    return JSON.parse(this.store.payloadOf(this.s.id, key) ?? '{}') as Payload;
  }

  private payloadOfSlot(slot: number): Payload {
    if (this.payloads) return this.payloads[slot] ?? {};
    return JSON.parse(this.store.payloadOf(this.s.id, this.keyOf[slot]!) ?? '{}') as Payload;
  }

  /** Keys of the points matching a predicate, in id order. */
  matching(pred: Predicate): string[] {
    const out: string[] = [];
    for (const [key, slot] of this.slotOf) if (pred(this.payloadOfSlot(slot), key)) out.push(key);
    return out.sort();
  }

  vectorOf(key: string): Float32Array | undefined {
    const b = this.store.vectorOf(this.s.id, key);
    return b ? fromBlob(b) : undefined;
  }

  /** Share of points a predicate accepts, from a deterministic sample of live slots. */
  estimateSelectivity(pred: Predicate): number {
    const n = this.slotOf.size;
    if (n === 0) return 0;
    const step = Math.max(1, Math.floor(this.nextSlot / SELECTIVITY_SAMPLE));
    let seen = 0;
    let hit = 0;
    for (let slot = 0; slot < this.nextSlot && seen < SELECTIVITY_SAMPLE; slot += step) {
      const key = this.keyOf[slot];
      if (!key) continue;
      seen++;
      if (pred(this.payloadOfSlot(slot), key)) hit++;
    }
    return seen ? hit / seen : 1;
  }

  /**
   * Top `need` points for a query vector in stored form, best first, with exact scores.
   * Plan: exact for small indexes and for filters estimated to leave few candidates; otherwise the
   * graph with the filter applied during traversal, falling back to exact when it comes back short.
   */
  search(q: Float32Array, need: number, pred?: Predicate): { results: Candidate[]; stats: SearchStats } {
    const n = this.slotOf.size;
    if (n === 0 || !this.ann) return { results: [], stats: { plan: 'exact', candidates: 0 } };
    if (!this.fillComplete) return { results: this.scanStored(q, need, pred), stats: { plan: 'exact', candidates: n } };
    let exact = n <= this.planner.exactMaxPoints;
    let selectivity = 1;
    if (!exact && pred) {
      selectivity = this.estimateSelectivity(pred);
      exact = selectivity * n <= this.planner.exactMaxCandidates;
    }
    if (exact) return { results: this.exactSearch(q, need, pred), stats: { plan: 'exact', candidates: n } };

    const k = Math.min(n, need * OVERSAMPLE[this.s.quantization]);
    // A selective filter rejects most visited nodes, so widen the beam in proportion.
    const base = Math.round(this.planner.ef * Math.min(2, Math.max(1, (2 * n) / this.planner.wideEfFromPoints)));
    const ef = Math.ceil(Math.max(base, k) / Math.max(selectivity, 0.05));
    const accept = pred ? (slot: number) => pred(this.payloadOfSlot(slot), this.keyOf[slot]!) : undefined;
    const found = this.ann.search(q, k, ef, accept);
    if (pred && found.length < Math.min(need, Math.ceil(selectivity * n))) {
      return { results: this.exactSearch(q, need, pred), stats: { plan: 'ann+fallback', candidates: n } };
    }
    // Float graphs report true distances (float32); code graphs only rank, so rescore with floats.
    const scored = this.ann.exactDistances
      ? found
          .map((f) => ({ slot: f.id, key: this.keyOf[f.id]!, score: annDistanceToScore(this.s.distance, f.dist) }))
          .sort(compareScored(this.s.distance))
      : this.rescore(q, found.map((f) => f.id));
    return { results: scored.slice(0, need), stats: { plan: 'ann', candidates: found.length, ef } };
  }

  /** Float vectors of live slots: from the graph when it holds floats, else from SQLite in one read. */
  private floatsOf(slots: number[]): Float32Array[] {
    const inGraph = slots.map((s) => this.ann!.floatVector(s));
    const missing = slots.filter((_, i) => !inGraph[i]).map((s) => this.keyOf[s]!);
    const stored = missing.length ? this.store.vectorsOf(this.s.id, missing) : undefined;
    return slots.map((s, i) => inGraph[i] ?? fromBlob(stored!.get(this.keyOf[s]!)!));
  }

  /** Exact top `need` over every stored (and accepted) vector, streamed from SQLite with a bounded buffer. */
  private scanStored(q: Float32Array, need: number, pred?: Predicate): Candidate[] {
    const cmp = compareScored(this.s.distance);
    let out: Candidate[] = [];
    for (const r of this.store.iteratePoints(this.s.id)) {
      const slot = this.slotOf.get(r.id_key)!;
      if (pred && !pred(this.payloadOfSlot(slot), r.id_key)) continue;
      out.push({ slot, key: r.id_key, score: exactScore(this.s.distance, fromBlob(r.vector), q) });
      if (out.length >= 4 * need + 256) out = out.sort(cmp).slice(0, need);
    }
    return out.sort(cmp).slice(0, need);
  }

  /** Exact scores for candidate slots, best first. */
  private rescore(q: Float32Array, slots: number[]): Candidate[] {
    const out: Candidate[] = [];
    // Chunks bound the memory of a large filtered scan; one SQLite read per chunk.
    for (let c = 0; c < slots.length; c += 512) {
      const chunk = slots.slice(c, c + 512);
      const vectors = this.floatsOf(chunk);
      chunk.forEach((slot, i) => out.push({ slot, key: this.keyOf[slot]!, score: exactScore(this.s.distance, vectors[i]!, q) }));
    }
    return out.sort(compareScored(this.s.distance));
  }

  /**
   * Scan without the graph over every live (and accepted) slot. Float indexes score exactly; code
   * indexes rank by codes in memory, then rescore a generous shortlist with the stored floats.
   */
  exactSearch(q: Float32Array, need: number, pred?: Predicate): Candidate[] {
    const slots: number[] = [];
    if (this.ann!.exactDistances && !pred) return this.scanStored(q, need);
    for (const [key, slot] of this.slotOf) if (!pred || pred(this.payloadOfSlot(slot), key)) slots.push(slot);
    if (this.ann!.exactDistances) return this.rescore(q, slots).slice(0, need);
    const d = this.ann!.distances(q, slots);
    const order = slots.map((_, i) => i).sort((a, b) => d[a]! - d[b]!);
    const shortlist = order.slice(0, Math.max(need * OVERSAMPLE[this.s.quantization] * 2, 64)).map((i) => slots[i]!);
    return this.rescore(q, shortlist).slice(0, need);
  }
}
