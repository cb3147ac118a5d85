import type { ExactTail } from './graph-hold.js';

/**
 * Points waiting for the float graph, kept in one contiguous Float32Array (a row per point, the
 * last row moved into a removed one) and scored in the graph's own space: `ip` 1 - dot, `l2` the
 * squared distance. Adding is a copy: hnswlib's own brute force took about 125 µs per 768-d point
 * to add (its binding reads a JavaScript array element by element), 32 ms of event loop per batch
 * of 256, more than the scans it saved.
 */
export class FloatTail implements ExactTail {
  private rows = new Float32Array(0);
  private slots: number[] = [];
  private readonly rowOf = new Map<number, number>();

  constructor(
    private readonly space: 'ip' | 'l2',
    private readonly dims: number,
  ) {}

  get size(): number {
    return this.slots.length;
  }

  add(slot: number, v: Float32Array): void {
    if (this.rowOf.has(slot)) this.remove(slot);
    const row = this.slots.length;
    if ((row + 1) * this.dims > this.rows.length) {
      const grown = new Float32Array(Math.max(1024, row * 2) * this.dims);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.rows.set(v, row * this.dims);
    this.slots.push(slot);
    this.rowOf.set(slot, row);
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
    if (this.slots.length === 0) this.rows = new Float32Array(0);
  }

  search(q: Float32Array, k: number, accept?: (slot: number) => boolean): Array<{ id: number; dist: number }> {
    const n = this.slots.length;
    const dims = this.dims;
    const rows = this.rows;
    const best: Array<{ id: number; dist: number }> = [];
    let worst = Infinity;
    for (let r = 0; r < n; r++) {
      if (accept && !accept(this.slots[r]!)) continue;
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
      } else {
        for (; i + 3 < dims; i += 4) {
          const d0 = rows[o + i]! - q[i]!, d1 = rows[o + i + 1]! - q[i + 1]!, d2 = rows[o + i + 2]! - q[i + 2]!, d3 = rows[o + i + 3]! - q[i + 3]!;
          a0 += d0 * d0;
          a1 += d1 * d1;
          a2 += d2 * d2;
          a3 += d3 * d3;
        }
        for (; i < dims; i++) a0 += (rows[o + i]! - q[i]!) ** 2;
      }
      const sum = a0 + a1 + a2 + a3;
      const dist = this.space === 'ip' ? 1 - sum : sum;
      if (best.length < k || dist < worst) {
        best.push({ id: this.slots[r]!, dist });
        if (best.length > 2 * k) {
          best.sort((x, y) => x.dist - y.dist).length = k;
          worst = best[k - 1]!.dist;
        }
      }
    }
    return best.sort((x, y) => x.dist - y.dist).slice(0, k);
  }
}
