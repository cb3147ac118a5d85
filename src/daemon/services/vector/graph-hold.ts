/**
 * Points that waited out a graph write enter it in slices this long: short, because searches and
 * acknowledgements wait behind a slice (one insertion into a dense 768-d graph takes milliseconds).
 */
const DRAIN_SLICE_MS = 5;

/** What a hold needs of the graph it holds. */
export interface HeldGraph {
  insert(slot: number, v: Float32Array): void;
  delete(slot: number): void;
  /** The graph's own distance from a query to a vector that is not in it, on its search's scale. */
  distanceTo(q: Float32Array, v: Float32Array): number;
}

/** An exact index over points not yet in the graph, scored on the graph's own scale. */
export interface ExactTail {
  readonly size: number;
  add(slot: number, v: Float32Array): void;
  remove(slot: number): void;
  search(q: Float32Array, k: number, accept?: (slot: number) => boolean): Array<{ id: number; dist: number }>;
}

/**
 * Holds a graph still while a save reads its memory off the event loop (hnswlib writing its file,
 * or our arrays written by the thread pool). Points added meanwhile wait beside the graph and are
 * searched exactly; removals are remembered and filtered out. On release the removals apply and
 * the waiting points enter the graph in slices, so a burst of upserts during a save does not hold
 * the event loop afterwards either.
 */
export class GraphHold {
  private held = false;
  private draining = false;
  private readonly waiting = new Map<number, Float32Array>();
  private readonly removing = new Set<number>();

  /**
   * @param tail an exact index over the waiting points, faster than a loop over the map (contiguous
   *   rows: FloatTail); it holds exactly the waiting points.
   */
  constructor(
    private readonly graph: HeldGraph,
    private readonly tail?: ExactTail,
  ) {}

  /**
   * Starts a hold, the graph first taking every waiting point, unless `keepWaiting` (a background
   * build's queue can be long: those points stay beside the graph, outside the save); returns its end, which
   * applies the removals and drains the waiting points in slices (a no-op after the first call).
   */
  begin(opts: { keepWaiting?: boolean } = {}): () => void {
    if (this.held) throw new Error('a save of this graph is already being written');
    if (!opts.keepWaiting) this.drain(Infinity);
    this.held = true;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.end(!opts.keepWaiting);
    };
  }

  /** Ends the hold; `drainAfter`: the waiting points enter the graph in slices (else the owner's build does it). */
  private end(drainAfter: boolean): void {
    this.held = false;
    for (const slot of this.removing) this.graph.delete(slot);
    this.removing.clear();
    if (this.waiting.size === 0 || !drainAfter) return;
    this.draining = true;
    const slice = () => {
      if (!this.held && this.drain(DRAIN_SLICE_MS)) setImmediate(slice);
    };
    slice();
  }

  add(slot: number, v: Float32Array): void {
    if (this.held || this.draining) this.enqueue(slot, v);
    else this.graph.insert(slot, v);
  }

  /**
   * Leaves a point beside the graph until `build` inserts it: searched exactly meanwhile, so an
   * acknowledged write is found at once while the graph catches up in the background.
   */
  enqueue(slot: number, v: Float32Array): void {
    this.waiting.set(slot, v);
    this.tail?.add(slot, v);
  }

  /** Slots of the points waiting beside the graph (a save leaves them out: they are not in it). */
  waitingSlots(): Iterable<number> {
    return this.waiting.keys();
  }

  /** The points waiting beside the graph, with their vectors. */
  waitingEntries(): Iterable<[number, Float32Array]> {
    return this.waiting.entries();
  }

  /** Whether a write holds the graph still. */
  get isHeld(): boolean {
    return this.held;
  }

  /** A waiting point that entered the graph another way (a graph built off the event loop swapped in): it leaves the tail. */
  settle(slot: number): void {
    if (this.waiting.delete(slot)) this.tail?.remove(slot);
  }

  /** Points waiting beside the graph. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** Inserts waiting points for about `budgetMs`; true while some remain and a save does not hold the graph. */
  build(budgetMs: number): boolean {
    // Held: nothing can enter now; the save's end drains what waits.
    if (this.held) return false;
    return this.drain(budgetMs);
  }

  remove(slot: number): void {
    if (this.waiting.delete(slot)) {
      this.tail?.remove(slot);
      return;
    }
    if (this.held) this.removing.add(slot);
    else this.graph.delete(slot);
  }

  /** The vector of a point waiting beside the graph, if it is one. */
  waitingVector(slot: number): Float32Array | undefined {
    return this.waiting.get(slot);
  }

  /**
   * Searches the graph through `search` (given the acceptance test with pending removals folded
   * in), then merges the waiting points scored exactly.
   */
  search(
    q: Float32Array,
    k: number,
    accept: ((slot: number) => boolean) | undefined,
    search: (accept: ((slot: number) => boolean) | undefined) => Array<{ id: number; dist: number }>,
  ): Array<{ id: number; dist: number }> {
    const removing = this.removing;
    const filter = removing.size ? (slot: number) => !removing.has(slot) && (!accept || accept(slot)) : accept;
    const found = search(filter);
    if (this.waiting.size === 0) return found;
    if (this.tail) found.push(...this.tail.search(q, k, accept));
    else for (const [slot, v] of this.waiting) if (!accept || accept(slot)) found.push({ id: slot, dist: this.graph.distanceTo(q, v) });
    return found.sort((a, b) => a.dist - b.dist).slice(0, k);
  }

  /** Moves waiting points into the graph for about `budgetMs`; true while some remain. */
  private drain(budgetMs: number): boolean {
    const started = performance.now();
    for (const [slot, v] of this.waiting) {
      this.graph.insert(slot, v);
      this.waiting.delete(slot);
      this.tail?.remove(slot);
      if (performance.now() - started >= budgetMs) break;
    }
    this.draining = this.waiting.size > 0;
    return this.draining;
  }
}
