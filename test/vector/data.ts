/** Data generators shared by the vector tests and bench/vector.ts (no test-framework imports). */
/** Deterministic PRNG (mulberry32) so random data is reproducible. */
export function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Gaussian-clustered vectors, so nearest neighbours are meaningful (as in the benchmark). */
export function clustered(n: number, dims: number, seed = 1, clusters = 20): number[][] {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const centers = Array.from({ length: clusters }, () => Array.from({ length: dims }, gauss));
  return Array.from({ length: n }, () => {
    const c = centers[Math.floor(r() * clusters)]!;
    return c.map((x) => x + 0.5 * gauss());
  });
}

export const ref = {
  dot: (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0),
  cosine: (a: number[], b: number[]) => ref.dot(a, b) / (Math.sqrt(ref.dot(a, a)) * Math.sqrt(ref.dot(b, b))),
  euclid: (a: number[], b: number[]) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]!) ** 2, 0)),
};
