/** Points that waited out a graph write enter it in slices this long (as the start-up fill does). */
const DRAIN_SLICE_MS = 20;

/** What a hold needs of the graph it holds. */
export interface HeldGraph {
  insert(slot: number, v: Float32Array): void;
  delete(slot: number): void;
  /** The graph's own distance from a query to a vector that is not in it, on its search's scale. */
  distanceTo(q: Float32Array, v: Float32Array): number;
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

  constructor(private readonly graph: HeldGraph) {}

  /**
   * Starts a hold, the graph then holding every point added so far; returns its end, which
   * applies the removals and drains the waiting points in slices (a no-op after the first call).
   */
  begin(): () => void {
    if (this.held) throw new Error('a save of this graph is already being written');
    this.drain(Infinity);
    this.held = true;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.end();
    };
  }

  private end(): void {
    this.held = false;
    for (const slot of this.removing) this.graph.delete(slot);
    this.removing.clear();
    if (this.waiting.size === 0) return;
    this.draining = true;
    const slice = () => {
      if (!this.held && this.drain(DRAIN_SLICE_MS)) setImmediate(slice);
    };
    slice();
  }

  add(slot: number, v: Float32Array): void {
    if (this.held || this.draining) this.waiting.set(slot, v);
    else this.graph.insert(slot, v);
  }

  remove(slot: number): void {
    if (this.waiting.delete(slot)) return;
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
    for (const [slot, v] of this.waiting) if (!accept || accept(slot)) found.push({ id: slot, dist: this.graph.distanceTo(q, v) });
    return found.sort((a, b) => a.dist - b.dist).slice(0, k);
  }

  /** Moves waiting points into the graph for about `budgetMs`; true while some remain. */
  private drain(budgetMs: number): boolean {
    const started = performance.now();
    for (const [slot, v] of this.waiting) {
      this.graph.insert(slot, v);
      this.waiting.delete(slot);
      if (performance.now() - started >= budgetMs) break;
    }
    this.draining = this.waiting.size > 0;
    return this.draining;
  }
}
