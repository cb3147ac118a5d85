import type { ExactTail } from './graph-hold.js';
import { float32Kernels, newMemory, type Float32Kernels, type WasmMemory } from './simd.js';

/** A WebAssembly memory of this size, or undefined past its 4 GiB (the rows then stay in JavaScript). */
function memoryFor(bytes: number): WasmMemory | undefined {
  try {
    return newMemory(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Points waiting for the float graph, kept in one contiguous Float32Array (a row per point, the
 * last row moved into a removed one) and scored in the graph's own space: `ip` 1 - dot, `l2` the
 * squared distance. Adding is a copy: hnswlib's own brute force took about 125 µs per 768-d point
 * to add (its binding reads a JavaScript array element by element), 32 ms of event loop per batch
 * of 256, more than the scans it saved.
 *
 * The rows live in WebAssembly memory and are scored by SIMD kernels (simd-f32.wat) when the width
 * is a multiple of 8: while clients ingest faster than the graph builds, this scan is most of a
 * search's own time (8,192 waiting 768-d rows: 1.8 ms against 11-30 ms for the JavaScript loop,
 * measured side by side). Scores are then float32 sums, as the graph's own distances are; the
 * engine reports exact scores from the stored floats either way.
 */
export class FloatTail implements ExactTail {
  private rows = new Float32Array(0);
  private slots: number[] = [];
  private readonly rowOf = new Map<number, number>();
  /** WebAssembly layout: the query at byte 0, the scores after it, then the rows (capacity of each). */
  private wasm?: { kernels: Float32Kernels; memory: WasmMemory; query: Float32Array; scores: Float32Array; rowsAt: number };
  private readonly simd: boolean;

  constructor(
    private readonly space: 'ip' | 'l2',
    private readonly dims: number,
  ) {
    this.simd = dims % 8 === 0 && dims > 0;
  }

  get size(): number {
    return this.slots.length;
  }

  add(slot: number, v: Float32Array): void {
    if (this.rowOf.has(slot)) this.remove(slot);
    const row = this.slots.length;
    if ((row + 1) * this.dims > this.rows.length) this.grow(Math.max(1024, row * 2));
    this.rows.set(v, row * this.dims);
    this.slots.push(slot);
    this.rowOf.set(slot, row);
  }

  /** Room for `capacity` rows: a new memory (WebAssembly memory cannot shrink), the rows copied. */
  private grow(capacity: number): void {
    const dims = this.dims;
    const used = this.rows.subarray(0, this.slots.length * dims);
    const memory = this.simd ? memoryFor((dims + capacity + capacity * dims) * 4) : undefined;
    const kernels = memory && float32Kernels(memory);
    if (memory && kernels) {
      const rowsAt = (dims + capacity) * 4;
      const grown = new Float32Array(memory.buffer, rowsAt, capacity * dims);
      grown.set(used);
      this.rows = grown;
      this.wasm = { kernels, memory, query: new Float32Array(memory.buffer, 0, dims), scores: new Float32Array(memory.buffer, dims * 4, capacity), rowsAt };
    } else {
      const grown = new Float32Array(capacity * dims);
      grown.set(used);
      this.rows = grown;
      this.wasm = undefined;
    }
  }

  remove(slot: number): void {
    const row = this.rowOf.get(slot);
    if (row === undefined) return;
    this.rowOf.delete(slot);
    const last = this.slots.length - 1;
    if (row !== last) {
      this.rows.copyWithin(row * this.dims, last * this.dims, (last + 1) * this.dims);
      this.slots[row] = this.slots[last]!;
      this.rowOf.set(this.slots[row]!, row);
    }
    this.slots.pop();
    // A drained tail gives its memory back.
    if (this.slots.length === 0) {
      this.rows = new Float32Array(0);
      this.wasm = undefined;
    }
  }

  search(q: Float32Array, k: number, accept?: (slot: number) => boolean): Array<{ id: number; dist: number }> {
    const n = this.slots.length;
    const best: Array<{ id: number; dist: number }> = [];
    if (n === 0) return best;
    const dist = this.wasm ? this.scoreAll(q) : undefined;
    let worst = Infinity;
    for (let r = 0; r < n; r++) {
      if (accept && !accept(this.slots[r]!)) continue;
      const d = dist ? (this.space === 'ip' ? 1 - dist[r]! : dist[r]!) : this.distance(r, q);
      if (best.length < k || d < worst) {
        best.push({ id: this.slots[r]!, dist: d });
        if (best.length > 2 * k) {
          best.sort((x, y) => x.dist - y.dist).length = k;
          worst = best[k - 1]!.dist;
        }
      }
    }
    return best.sort((x, y) => x.dist - y.dist).slice(0, k);
  }

  /** Every row's dot product (ip) or squared distance (l2) with the query, by the SIMD kernels. */
  private scoreAll(q: Float32Array): Float32Array {
    const w = this.wasm!;
    w.query.set(q);
    const n = this.slots.length;
    if (this.space === 'ip') w.kernels.dots(w.rowsAt, 0, n, this.dims / 8, this.dims * 4);
    else w.kernels.l2s(w.rowsAt, 0, n, this.dims / 8, this.dims * 4);
    return w.scores;
  }

  /** One row's distance in JavaScript (widths that are not a multiple of 8, or no SIMD). */
  private distance(r: number, q: Float32Array): number {
    const dims = this.dims;
    const rows = this.rows;
    const o = r * dims;
    // Four accumulators let the loop run without waiting on one sum.
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    let i = 0;
    if (this.space === 'ip') {
      for (; i + 3 < dims; i += 4) {
        a0 += rows[o + i]! * q[i]!;
        a1 += rows[o + i + 1]! * q[i + 1]!;
        a2 += rows[o + i + 2]! * q[i + 2]!;
        a3 += rows[o + i + 3]! * q[i + 3]!;
      }
      for (; i < dims; i++) a0 += rows[o + i]! * q[i]!;
      return 1 - (a0 + a1 + a2 + a3);
    }
    for (; i + 3 < dims; i += 4) {
      const d0 = rows[o + i]! - q[i]!, d1 = rows[o + i + 1]! - q[i + 1]!, d2 = rows[o + i + 2]! - q[i + 2]!, d3 = rows[o + i + 3]! - q[i + 3]!;
      a0 += d0 * d0;
      a1 += d1 * d1;
      a2 += d2 * d2;
      a3 += d3 * d3;
    }
    for (; i < dims; i++) a0 += (rows[o + i]! - q[i]!) ** 2;
    return a0 + a1 + a2 + a3;
  }
}
