/**
 * Binary heap of (distance, id) pairs in parallel arrays; `max` flips the order. Small and
 * allocation-free per push, which matters in the graph search's inner loop.
 */
export class Heap {
  private d: number[] = [];
  private i: number[] = [];
  constructor(private readonly max: boolean) {}
  get size() {
    return this.d.length;
  }
  topDist() {
    return this.d[0]!;
  }
  topId() {
    return this.i[0]!;
  }
  private before(a: number, b: number) {
    return this.max ? this.d[a]! > this.d[b]! : this.d[a]! < this.d[b]!;
  }
  private swap(a: number, b: number) {
    const td = this.d[a]!;
    this.d[a] = this.d[b]!;
    this.d[b] = td;
    const ti = this.i[a]!;
    this.i[a] = this.i[b]!;
    this.i[b] = ti;
  }
  push(dist: number, id: number) {
    this.d.push(dist);
    this.i.push(id);
    let k = this.d.length - 1;
    while (k > 0) {
      const p = (k - 1) >> 1;
      if (!this.before(k, p)) break;
      this.swap(k, p);
      k = p;
    }
  }
  pop(): void {
    const last = this.d.length - 1;
    this.swap(0, last);
    this.d.pop();
    this.i.pop();
    let k = 0;
    const n = this.d.length;
    for (;;) {
      const l = 2 * k + 1;
      const r = l + 1;
      let m = k;
      if (l < n && this.before(l, m)) m = l;
      if (r < n && this.before(r, m)) m = r;
      if (m === k) break;
      this.swap(k, m);
      k = m;
    }
  }
  /** Entries in no particular order. */
  entries(): Array<{ dist: number; id: number }> {
    return this.d.map((dist, k) => ({ dist, id: this.i[k]! }));
  }
}
