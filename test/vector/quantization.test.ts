import { describe, expect, it } from 'vitest';
import { ScalarCodes } from '../../src/daemon/services/vector/quantization.js';
import { rng } from './data.js';

/** Reference: decode the codes the way ScalarCodes defines them, then score in float64. */
function decoded(v: Float32Array, lo: number, hi: number): number[] {
  const step = (hi - lo) / 254;
  return Array.from(v, (x) => lo + Math.min(254, Math.max(0, Math.round((x - lo) / step))) * step);
}
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

describe('scalar codes (int8) scored by the SIMD kernels', () => {
  for (const dims of [1, 37, 768, 4096]) {
    it(`match the decoded-float reference at ${dims} dimensions, for query and code-to-code distances`, () => {
      const r = rng(dims);
      const vec = () => Float32Array.from({ length: dims }, () => (r() - 0.5) * 2.4);
      const lo = -1;
      const hi = 1;
      for (const distance of ['dot', 'euclid'] as const) {
        const space = new ScalarCodes(dims, distance, lo, hi, 4);
        if (!space.accelerated) console.warn('WebAssembly SIMD unavailable: ScalarCodes runs its JavaScript loops');
        expect(space.accelerated).toBe(true);
        const vs = Array.from({ length: 40 }, vec);
        // Slots beyond the initial capacity make the memory grow (views are rebuilt).
        space.grow(64);
        vs.forEach((v, i) => space.set(i, v));
        const xs = vs.map((v) => decoded(v, lo, hi));
        for (let t = 0; t < 5; t++) {
          const q = vec();
          const prep = space.prepare(q);
          for (let i = 0; i < vs.length; i++) {
            const want = distance === 'euclid' ? dot(xs[i]!, xs[i]!) - 2 * dot(xs[i]!, q) : -dot(xs[i]!, q);
            expect(Math.abs(space.distQ(prep, i) - want)).toBeLessThan(1e-3 * Math.max(1, Math.sqrt(dims)));
          }
        }
        for (let i = 1; i < vs.length; i++) {
          const want = distance === 'euclid' ? dot(xs[i]!, xs[i]!) + dot(xs[0]!, xs[0]!) - 2 * dot(xs[0]!, xs[i]!) : -dot(xs[0]!, xs[i]!);
          expect(Math.abs(space.distSS(0, i) - want)).toBeLessThan(1e-3 * Math.max(1, dims / 100));
        }
      }
    });
  }
});
