import hnswlib from 'hnswlib-node';
import type { ExactTail } from './graph-hold.js';

/** Points per native brute-force block: blocks have a fixed capacity, so the tail grows by blocks. */
const BLOCK = 4096;

/**
 * Points waiting for the float graph, scored by hnswlib's native brute force (SIMD distances over
 * contiguous memory) in the graph's own space, so a tail of tens of thousands of acknowledged
 * points costs a search milliseconds, not the tens a JavaScript loop over them takes.
 */
export class NativeExactTail implements ExactTail {
  private readonly blocks: hnswlib.BruteforceSearch[] = [];
  private readonly blockOf = new Map<number, hnswlib.BruteforceSearch>();

  constructor(
    private readonly space: 'ip' | 'l2',
    private readonly dims: number,
  ) {}

  get size(): number {
    return this.blockOf.size;
  }

  add(slot: number, v: Float32Array): void {
    if (this.blockOf.has(slot)) this.remove(slot);
    let block = this.blocks.find((b) => b.getCurrentCount() < BLOCK);
    if (!block) {
      block = new hnswlib.BruteforceSearch(this.space, this.dims);
      block.initIndex(BLOCK);
      this.blocks.push(block);
    }
    block.addPoint(Array.from(v), slot);
    this.blockOf.set(slot, block);
  }

  remove(slot: number): void {
    const block = this.blockOf.get(slot);
    if (!block) return;
    block.removePoint(slot);
    this.blockOf.delete(slot);
    // An emptied block is released, so a drained tail gives its memory back.
    if (block.getCurrentCount() === 0) this.blocks.splice(this.blocks.indexOf(block), 1);
  }

  search(q: Float32Array, k: number): Array<{ id: number; dist: number }> {
    if (this.blockOf.size === 0) return [];
    const query = Array.from(q);
    const out: Array<{ id: number; dist: number }> = [];
    for (const block of this.blocks) {
      const count = block.getCurrentCount();
      if (count === 0) continue;
      const r = block.searchKnn(query, Math.min(k, count));
      r.neighbors.forEach((id, i) => out.push({ id, dist: r.distances[i]! }));
    }
    return out;
  }
}
