/** What `scanUpsert` hands back: the parse worker's batch (see upsert-parse.ts). */
export interface ScannedUpsert {
  ids: unknown[];
  payloads: Array<Record<string, unknown> | null | undefined>;
  vectors: Float32Array;
  lengths: Int32Array;
  raw: never[];
  /** Every vector within the float32 range and norm limits (components below 1e17, squared norm at most 1e36). */
  checked: true;
}

/**
 * Reads an upsert body of the plain shape `{"points": [{"id", "vector", "payload"}, ...]}` straight
 * from its bytes, writing each vector's numbers into one Float32Array as it scans them: no string
 * of the body, no JavaScript array of 196,608 doubles per batch of 256 x 768, which is what
 * JSON.parse spent its 76-113 ms of a parse worker's time on (issue 26). Ids and payloads, small,
 * are cut out and given to JSON.parse.
 *
 * Anything else returns undefined and the body takes the JSON.parse path (which itself hands wrong
 * bodies to the router's ordinary path, so every 400 keeps its text): another key or a key written
 * with escapes, a key twice, an id that is an object or array, a payload that is not an object or
 * is too deep, anything after the body, a number that JSON forbids, and any component of 1e17 or
 * more (or a squared norm past 1e36): the range and norm checks near their limits stay with the
 * doubles of JSON.parse, so their answers and messages are the same.
 *
 * Each number becomes the float32 that JSON.parse's double rounds to. The mantissa's first 19
 * digits are scaled by exact powers of ten; that double can be a few units off in its last place,
 * which changes the float32 only when the value lies next to the midpoint between two float32s,
 * and those (a few in a million for arbitrary doubles, never for float32 data) are parsed by
 * Number() on their text instead.
 *
 * Self-contained on purpose: the parse worker runs this function's source (`scanUpsert.toString()`),
 * so it may use nothing from the module around it.
 */
export function scanUpsert(bytes: Uint8Array, maxPoints: number, maxDepth: number): ScannedUpsert | undefined {
  const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
  const LARGEST = 1e17;
  const LARGEST_SQUARED_NORM = 1e36;
  const MIN_NORMAL_F32 = 1.1754943508222875e-38;
  const bits = new Int32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  const n = bytes.length;
  let i = 0;

  const skipSpace = () => {
    while (i < n) {
      const c = bytes[i]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };
  const consume = (c: number) => {
    skipSpace();
    if (bytes[i] !== c) return false;
    i++;
    return true;
  };
  const text = (from: number, to: number) => Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('utf8');
  /** A key among `names` (its index), or -1 for any other key (escaped ones included). */
  const key = (names: string[]): number => {
    skipSpace();
    if (bytes[i] !== 0x22) return -1;
    const start = ++i;
    while (i < n && bytes[i] !== 0x22) {
      if (bytes[i] === 0x5c) return -1;
      i++;
    }
    if (i >= n) return -1;
    const len = i - start;
    i++;
    if (!consume(0x3a)) return -1;
    outer: for (let k = 0; k < names.length; k++) {
      const name = names[k]!;
      if (name.length !== len) continue;
      for (let j = 0; j < len; j++) if (bytes[start + j] !== name.charCodeAt(j)) continue outer;
      return k;
    }
    return -1;
  };
  /** The end of the JSON value starting at i (strings and nesting respected; JSON.parse validates it). */
  const valueEnd = (): number => {
    let depth = 0;
    let j = i;
    for (; j < n; j++) {
      const c = bytes[j]!;
      if (c === 0x22) {
        for (j++; j < n && bytes[j] !== 0x22; j++) if (bytes[j] === 0x5c) j++;
      } else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (depth === 0) return j;
        if (--depth === 0) return j + 1;
      } else if (depth === 0 && (c === 0x2c || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) return j;
    }
    return depth === 0 ? j : -1;
  };
  const value = (): { ok: boolean; v?: unknown } => {
    skipSpace();
    const start = i;
    const end = valueEnd();
    if (end <= start) return { ok: false };
    i = end;
    try {
      return { ok: true, v: JSON.parse(text(start, end)) };
    } catch {
      return { ok: false };
    }
  };
  const depthOf = (root: unknown, limit: number) => {
    let max = 0;
    const stack: Array<[unknown, number]> = [[root, 1]];
    while (stack.length) {
      const [v, d] = stack.pop()!;
      if (typeof v !== 'object' || v === null) continue;
      if (d > max && (max = d) > limit) return max;
      for (const k in v as Record<string, unknown>) stack.push([(v as Record<string, unknown>)[k], d + 1]);
    }
    return max;
  };

  let vectors = new Float32Array(Math.max(1024, n >> 3));
  let total = 0;
  /** The exact double of the number between two offsets, as JSON.parse reads it (the rare slow case). */
  const exactNumber = (from: number, to: number) => Number(Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1'));
  /**
   * The numbers of one vector at i, appended to `vectors`; its length, or -1 to give the body up
   * (not a JSON number, or past the plain range: see above). One loop over a local offset: the
   * shared `i` is a closure variable, which V8 keeps in memory, and this loop reads every byte.
   */
  const vector = (): number => {
    if (!consume(0x5b)) return -1;
    const first = total;
    let squared = 0;
    let p = i;
    let c = bytes[p];
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = bytes[++p];
    if (c === 0x5d) {
      i = p + 1;
      return 0;
    }
    for (;;) {
      while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = bytes[++p];
      const start = p;
      const negative = c === 0x2d;
      if (negative) c = bytes[++p];
      // The first 18 significant digits in two integers of 9 (small-integer arithmetic, whose
      // multiply-adds do not wait on each other as a double's would); the rest only scale.
      let hi = 0;
      let lo = 0;
      let loDigits = 0;
      let digits = 0;
      let exp10 = 0;
      if (c === 0x30) {
        c = bytes[++p];
        if (c !== undefined && c >= 0x30 && c <= 0x39) return -1;
      } else if (c !== undefined && c >= 0x31 && c <= 0x39) {
        do {
          if (digits < 9) hi = hi * 10 + (c - 0x30);
          else if (digits < 18) {
            lo = lo * 10 + (c - 0x30);
            loDigits++;
          } else exp10++;
          digits++;
          c = bytes[++p];
        } while (c !== undefined && c >= 0x30 && c <= 0x39);
      } else return -1;
      if (c === 0x2e) {
        c = bytes[++p];
        if (c === undefined || c < 0x30 || c > 0x39) return -1;
        do {
          if (digits === 0 && c === 0x30) exp10--;
          else if (digits < 18) {
            if (digits < 9) hi = hi * 10 + (c - 0x30);
            else {
              lo = lo * 10 + (c - 0x30);
              loDigits++;
            }
            digits++;
            exp10--;
          }
          c = bytes[++p];
        } while (c !== undefined && c >= 0x30 && c <= 0x39);
      }
      if (c === 0x65 || c === 0x45) {
        c = bytes[++p];
        let sign = 1;
        if (c === 0x2b || c === 0x2d) {
          if (c === 0x2d) sign = -1;
          c = bytes[++p];
        }
        if (c === undefined || c < 0x30 || c > 0x39) return -1;
        let e = 0;
        do {
          if (e < 100000) e = e * 10 + (c - 0x30);
          c = bytes[++p];
        } while (c !== undefined && c >= 0x30 && c <= 0x39);
        exp10 += sign * e;
      }
      const mantissa = loDigits ? hi * POW10[loDigits]! + lo : hi;
      let x: number;
      if (mantissa === 0) x = negative ? -0 : 0;
      else {
        let approx: number;
        if (exp10 >= 0 && exp10 <= 22) approx = mantissa * POW10[exp10]!;
        else if (exp10 < 0 && exp10 >= -22) approx = mantissa / POW10[-exp10]!;
        else if (exp10 < 0 && exp10 >= -44) approx = mantissa / 1e22 / POW10[-exp10 - 22]!;
        else approx = NaN;
        const f = Math.fround(approx);
        // Near a midpoint between two float32s (or outside the plain cases): the exact double decides.
        let exact = !(approx >= MIN_NORMAL_F32 && approx < LARGEST);
        if (!exact && f !== approx) {
          asFloat[0] = f;
          bits[0] += approx > f ? 1 : -1;
          const midpoint = (f + asFloat[0]!) / 2;
          exact = Math.abs(approx - midpoint) <= approx * 2 ** -40;
        }
        if (exact) {
          const d = exactNumber(start, p);
          if (!(Math.abs(d) < LARGEST)) return -1;
          x = Math.fround(d);
        } else x = negative ? -f : f;
      }
      squared += x * x;
      if (total === vectors.length) {
        const grown = new Float32Array(vectors.length * 2);
        grown.set(vectors);
        vectors = grown;
      }
      vectors[total++] = x;
      while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = bytes[++p];
      p++;
      if (c === 0x5d) break;
      if (c !== 0x2c) return -1;
      c = bytes[p];
    }
    i = p;
    if (!(squared < LARGEST_SQUARED_NORM)) return -1;
    return total - first;
  };

  const ids: unknown[] = [];
  const payloads: Array<Record<string, unknown> | null | undefined> = [];
  const lengths: number[] = [];
  const POINT_KEYS = ['id', 'vector', 'payload'];
  const plain = (o: unknown): o is Record<string, unknown> => typeof o === 'object' && o !== null && !Array.isArray(o);
  /** One point object at i; false to give the body up. */
  const point = (): boolean => {
    if (!consume(0x7b)) return false;
    const seen = [false, false, false];
    let id: unknown;
    let payload: Record<string, unknown> | null | undefined;
    let length = -1;
    skipSpace();
    if (bytes[i] === 0x7d) return false; // no vector: the ordinary path names what is missing
    for (;;) {
      const k = key(POINT_KEYS);
      if (k < 0 || seen[k]) return false;
      seen[k] = true;
      if (k === 1) {
        length = vector();
        if (length < 0) return false;
      } else {
        const r = value();
        if (!r.ok) return false;
        if (k === 0) {
          if (typeof r.v === 'object' && r.v !== null) return false;
          id = r.v;
        } else {
          if (r.v !== null && (!plain(r.v) || 3 + depthOf(r.v, maxDepth) > maxDepth)) return false;
          payload = r.v as Record<string, unknown> | null;
        }
      }
      skipSpace();
      const c = bytes[i++];
      if (c === 0x7d) break;
      if (c !== 0x2c) return false;
    }
    if (length < 0) return false;
    ids.push(id);
    payloads.push(payload);
    lengths.push(length);
    return true;
  };

  if (!consume(0x7b) || key(['points']) !== 0 || !consume(0x5b)) return undefined;
  skipSpace();
  if (bytes[i] === 0x5d) return undefined;
  for (;;) {
    if (!point() || lengths.length > maxPoints) return undefined;
    skipSpace();
    const c = bytes[i++];
    if (c === 0x5d) break;
    if (c !== 0x2c) return undefined;
  }
  if (!consume(0x7d)) return undefined;
  skipSpace();
  if (i !== n) return undefined;
  return {
    ids,
    payloads,
    // A copy of the used part: the array is transferred, and its spare capacity need not travel.
    vectors: vectors.slice(0, total),
    lengths: Int32Array.from(lengths),
    raw: [],
    checked: true,
  };
}
