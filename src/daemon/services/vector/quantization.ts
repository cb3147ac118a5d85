import type { Distance } from '../../../api/vector.js';
import { int8Kernels, newMemory, WASM_PAGE, type Int8Kernels, type WasmMemory } from './simd.js';

/**
 * In-memory vector codes an HNSW graph scores candidates with. `FloatCodes` keeps float32 (used to
 * compare our graph with hnswlib in the benchmark); `ScalarCodes` keeps one byte per dimension and
 * `BinaryCodes` one bit, which is the point of quantization: the float vectors stay in SQLite and
 * only the final candidates are rescored with them. All distances are "smaller is closer".
 */
export interface CodeSpace {
  readonly dims: number;
  /** Bytes held per vector slot (codes plus per-vector side data). */
  readonly bytesPerVector: number;
  capacity(): number;
  grow(capacity: number): void;
  set(slot: number, v: Float32Array): void;
  /** Prepares a query once; `distQ` then scores a slot against it. */
  prepare(q: Float32Array): unknown;
  distQ(prep: unknown, slot: number): number;
  distSS(a: number, b: number): number;
  /** `distQ` of a float query to a vector not in the space, as if it were coded (points waiting out a save). */
  distFloat(q: Float32Array, v: Float32Array): number;
  /** The codes as sections of a saved graph, and their restore into a space of the same capacity. */
  exportCodes(): ArrayBufferView[];
  importCodes(sections: Uint8Array[]): void;
}

/** Copies saved sections into same-sized typed arrays, refusing any size mismatch. */
function fill(targets: Array<Uint8Array | Uint32Array | Float32Array>, sections: Uint8Array[]): void {
  if (sections.length !== targets.length) throw new Error('saved codes have the wrong number of sections');
  targets.forEach((t, i) => {
    const src = sections[i]!;
    if (src.byteLength !== t.byteLength) throw new Error('saved codes do not match the index capacity');
    new Uint8Array(t.buffer, t.byteOffset, t.byteLength).set(src);
  });
}

export class FloatCodes implements CodeSpace {
  private data: Float32Array;
  readonly bytesPerVector: number;
  constructor(
    readonly dims: number,
    private readonly distance: Distance,
    cap = 1024,
  ) {
    this.data = new Float32Array(cap * dims);
    this.bytesPerVector = dims * 4;
  }
  capacity() {
    return this.data.length / this.dims;
  }
  grow(cap: number) {
    const next = new Float32Array(cap * this.dims);
    next.set(this.data);
    this.data = next;
  }
  set(slot: number, v: Float32Array) {
    this.data.set(v, slot * this.dims);
  }
  prepare(q: Float32Array) {
    return q;
  }
  vector(slot: number) {
    return this.data.slice(slot * this.dims, (slot + 1) * this.dims);
  }
  exportCodes() {
    return [this.data];
  }
  importCodes(sections: Uint8Array[]) {
    fill([this.data], sections);
  }
  distQ(prep: unknown, slot: number) {
    const q = prep as Float32Array;
    const d = this.data;
    const o = slot * this.dims;
    let s = 0;
    if (this.distance === 'euclid') {
      for (let i = 0; i < q.length; i++) {
        const x = d[o + i]! - q[i]!;
        s += x * x;
      }
      return s;
    }
    for (let i = 0; i < q.length; i++) s += d[o + i]! * q[i]!;
    return -s;
  }
  distSS(a: number, b: number) {
    return this.distQ(this.data.subarray(a * this.dims, (a + 1) * this.dims), b);
  }
  distFloat(q: Float32Array, v: Float32Array) {
    let s = 0;
    if (this.distance === 'euclid') {
      for (let i = 0; i < q.length; i++) s += (v[i]! - q[i]!) ** 2;
      return s;
    }
    for (let i = 0; i < q.length; i++) s += v[i]! * q[i]!;
    return -s;
  }
}

/**
 * Scalar (int8) quantization: each component maps linearly onto 0..254 between two bounds taken
 * from the data at the configured quantile (Qdrant's `quantile`, default 0.99), so outliers do not
 * stretch the grid. Values outside are clamped; the float rescoring step repairs their order.
 *
 * Codes live in a WebAssembly memory, one row per slot padded to 16 bytes, so the SIMD kernels of
 * simd.ts can score them; the query is quantized to int16 once per search (its rounding error is
 * far below the codes' own, and final scores come from the stored floats anyway). Where
 * WebAssembly SIMD is missing, plain loops over the same bytes give the same ranking.
 */
export class ScalarCodes implements CodeSpace {
  private mem: WasmMemory;
  private u8!: Uint8Array;
  private q16!: Int16Array;
  private readonly kernels: Int8Kernels | undefined;
  /** Padded bytes per row; the int16 query region (2 bytes per padded dimension) comes first. */
  private readonly row: number;
  private readonly codesOff: number;
  private readonly qMax: number;
  private loaded: unknown;
  private sums: Float32Array;
  private norms: Float32Array;
  readonly bytesPerVector: number;
  private readonly step: number;
  constructor(
    readonly dims: number,
    private readonly distance: Distance,
    readonly lo: number,
    readonly hi: number,
    cap = 1024,
  ) {
    this.row = Math.ceil(dims / 16) * 16;
    this.codesOff = this.row * 2;
    // Each i32 lane of the kernel sums row/4 products of a code (<= 254) and the query: bound the
    // query so no lane can overflow, whatever the width.
    this.qMax = Math.min(32767, Math.floor(2 ** 31 / (254 * (this.row / 4))) - 1);
    this.mem = newMemory(this.codesOff + cap * this.row);
    this.kernels = int8Kernels(this.mem);
    this.views();
    this.sums = new Float32Array(cap);
    this.norms = new Float32Array(cap);
    this.step = hi > lo ? (hi - lo) / 254 : 1;
    this.bytesPerVector = this.row + 8;
  }
  exportCodes() {
    return [this.u8.subarray(this.codesOff, this.codesOff + this.capacity() * this.row), this.sums, this.norms];
  }
  importCodes(sections: Uint8Array[]) {
    fill([this.u8.subarray(this.codesOff, this.codesOff + this.capacity() * this.row), this.sums, this.norms], sections);
  }
  /** Whether the SIMD kernels score the codes (false: the JavaScript loops). */
  get accelerated() {
    return this.kernels !== undefined;
  }
  private views() {
    this.u8 = new Uint8Array(this.mem.buffer);
    this.q16 = new Int16Array(this.mem.buffer, 0, this.row);
    this.loaded = undefined;
  }
  /** Bounds covering `quantile` of the sample's components (symmetric tails). */
  static bounds(sample: Float32Array[], quantile: number): { lo: number; hi: number } {
    const all: number[] = [];
    const stride = Math.max(1, Math.floor((sample.length * (sample[0]?.length ?? 0)) / 200_000));
    let n = 0;
    for (const v of sample) for (let i = 0; i < v.length; i++) if (n++ % stride === 0) all.push(v[i]!);
    if (all.length === 0) return { lo: -1, hi: 1 };
    all.sort((a, b) => a - b);
    const tail = (1 - quantile) / 2;
    const lo = all[Math.floor(tail * (all.length - 1))]!;
    const hi = all[Math.ceil((1 - tail) * (all.length - 1))]!;
    return hi > lo ? { lo, hi } : { lo: lo - 1, hi: hi + 1 };
  }
  capacity() {
    return this.sums.length;
  }
  grow(cap: number) {
    const need = this.codesOff + cap * this.row;
    if (need > this.mem.buffer.byteLength) {
      this.mem.grow(Math.ceil((need - this.mem.buffer.byteLength) / WASM_PAGE));
      this.views();
    }
    const s = new Float32Array(cap);
    s.set(this.sums);
    this.sums = s;
    const n = new Float32Array(cap);
    n.set(this.norms);
    this.norms = n;
  }
  set(slot: number, v: Float32Array) {
    const o = this.codesOff + slot * this.row;
    let sum = 0;
    let norm = 0;
    for (let i = 0; i < this.dims; i++) {
      let c = Math.round((v[i]! - this.lo) / this.step);
      c = c < 0 ? 0 : c > 254 ? 254 : c;
      this.u8[o + i] = c;
      sum += c;
      const x = this.lo + c * this.step;
      norm += x * x;
    }
    this.sums[slot] = sum;
    this.norms[slot] = norm;
  }
  prepare(q: Float32Array): ScalarQuery {
    let qs = 0;
    let maxAbs = 0;
    for (let i = 0; i < q.length; i++) {
      qs += q[i]!;
      maxAbs = Math.max(maxAbs, Math.abs(q[i]!));
    }
    const q16 = new Int16Array(this.row);
    const scale = maxAbs > 0 ? this.qMax / maxAbs : 0;
    for (let i = 0; i < q.length; i++) q16[i] = Math.round(q[i]! * scale);
    return { q, qs, q16, inv: scale > 0 ? 1 / scale : 0 };
  }
  /** Σ c_i q_i for a slot: SIMD over the int16 query, or a loop over the float query. */
  private codeDot(p: ScalarQuery, slot: number): number {
    const o = this.codesOff + slot * this.row;
    if (this.kernels) {
      if (this.loaded !== p) {
        this.q16.set(p.q16);
        this.loaded = p;
      }
      return this.kernels.dotq(o, 0, this.row / 16) * p.inv;
    }
    const c = this.u8;
    const q = p.q;
    let s = 0;
    for (let i = 0; i < q.length; i++) s += c[o + i]! * q[i]!;
    return s;
  }
  /** x̂·q = lo·Σq + step·Σ c_i q_i, computed straight from the codes. */
  distQ(prep: unknown, slot: number) {
    const p = prep as ScalarQuery;
    const dotq = this.lo * p.qs + this.step * this.codeDot(p, slot);
    return this.distance === 'euclid' ? this.norms[slot]! - 2 * dotq : -dotq;
  }
  distSS(a: number, b: number) {
    const oa = this.codesOff + a * this.row;
    const ob = this.codesOff + b * this.row;
    let s = 0;
    if (this.kernels) s = this.kernels.dotcc(oa, ob, this.row / 16);
    else {
      const c = this.u8;
      for (let i = 0; i < this.dims; i++) s += c[oa + i]! * c[ob + i]!;
    }
    const dot = this.dims * this.lo * this.lo + this.lo * this.step * (this.sums[a]! + this.sums[b]!) + this.step * this.step * s;
    return this.distance === 'euclid' ? this.norms[a]! + this.norms[b]! - 2 * dot : -dot;
  }
  distFloat(q: Float32Array, v: Float32Array) {
    let dot = 0;
    let norm = 0;
    for (let i = 0; i < this.dims; i++) {
      let c = Math.round((v[i]! - this.lo) / this.step);
      c = c < 0 ? 0 : c > 254 ? 254 : c;
      const x = this.lo + c * this.step;
      dot += x * q[i]!;
      norm += x * x;
    }
    return this.distance === 'euclid' ? norm - 2 * dot : -dot;
  }
}

interface ScalarQuery {
  q: Float32Array;
  qs: number;
  q16: Int16Array;
  /** 1 / the query's int16 scale: turns the kernel's integer sum back into Σ c_i q_i. */
  inv: number;
}

const popcount = (x: number) => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

/**
 * Binary quantization: one sign bit per component, scored by Hamming distance (the angle
 * estimate Qdrant uses for centred embeddings). 32x smaller than float32; recall comes from
 * oversampling plus float rescoring.
 */
export class BinaryCodes implements CodeSpace {
  private bits: Uint32Array;
  private readonly words: number;
  readonly bytesPerVector: number;
  constructor(
    readonly dims: number,
    cap = 1024,
  ) {
    this.words = Math.ceil(dims / 32);
    this.bits = new Uint32Array(cap * this.words);
    this.bytesPerVector = this.words * 4;
  }
  capacity() {
    return this.bits.length / this.words;
  }
  grow(cap: number) {
    const b = new Uint32Array(cap * this.words);
    b.set(this.bits);
    this.bits = b;
  }
  exportCodes() {
    return [this.bits];
  }
  importCodes(sections: Uint8Array[]) {
    fill([this.bits], sections);
  }
  private encode(v: Float32Array, out: Uint32Array, o: number) {
    for (let w = 0; w < this.words; w++) out[o + w] = 0;
    for (let i = 0; i < this.dims; i++) if (v[i]! > 0) out[o + (i >>> 5)]! |= 1 << (i & 31);
  }
  set(slot: number, v: Float32Array) {
    this.encode(v, this.bits, slot * this.words);
  }
  prepare(q: Float32Array) {
    const out = new Uint32Array(this.words);
    this.encode(q, out, 0);
    return out;
  }
  distQ(prep: unknown, slot: number) {
    const q = prep as Uint32Array;
    const o = slot * this.words;
    let h = 0;
    for (let w = 0; w < this.words; w++) h += popcount((q[w]! ^ this.bits[o + w]!) >>> 0);
    return h;
  }
  distSS(a: number, b: number) {
    const oa = a * this.words;
    const ob = b * this.words;
    let h = 0;
    for (let w = 0; w < this.words; w++) h += popcount((this.bits[oa + w]! ^ this.bits[ob + w]!) >>> 0);
    return h;
  }
  distFloat(q: Float32Array, v: Float32Array) {
    let h = 0;
    for (let i = 0; i < this.dims; i++) if (q[i]! > 0 !== v[i]! > 0) h++;
    return h;
  }
}
