import { describe, expect, it } from 'vitest';
import { engineHarness } from './engine-harness.js';
import { clustered, ref } from './data.js';
import { storedForm } from '../../src/daemon/services/vector/scoring.js';
import { intKey } from '../../src/daemon/services/vector/point-ids.js';

/**
 * Recall@10 of the graph search (exact scans disabled) against brute force on clustered random
 * data, per distance and quantization, plus the memory the quantized codes save. Bounds are set
 * below the measured values with margin (measured: see docs/decisions/vector.md).
 */
const N = 2000;
const DIMS = 48;
const data = clustered(N + 40, DIMS, 5);
const base = data.slice(0, N);
const queries = data.slice(N);

const BOUNDS = { none: 0.97, scalar: 0.95, binary: 0.9 } as const;

function truth(distance: 'cosine' | 'dot' | 'euclid', q: number[]): Set<string> {
  const scored = base.map((v, i) => ({ i, s: ref[distance](v, q) }));
  scored.sort((a, b) => (distance === 'euclid' ? a.s - b.s : b.s - a.s));
  return new Set(scored.slice(0, 10).map((x) => intKey(x.i)));
}

describe('graph recall@10 vs exact search', () => {
  for (const distance of ['cosine', 'dot', 'euclid'] as const) {
    for (const quantization of ['none', 'scalar', 'binary'] as const) {
      it(`${distance}, quantization ${quantization}: recall ≥ ${BOUNDS[quantization]}`, () => {
        const h = engineHarness({ dims: DIMS, distance, quantization });
        h.insert(base);
        let hits = 0;
        for (const q of queries) {
          const t = truth(distance, q);
          const { results, stats } = h.engine.search(storedForm(distance, q), 10);
          expect(stats.plan).toBe('ann');
          hits += results.filter((r) => t.has(r.key)).length;
        }
        const recall = hits / (10 * queries.length);
        console.info(`recall@10 ${distance}/${quantization}: ${recall.toFixed(3)}`);
        expect(recall).toBeGreaterThanOrEqual(BOUNDS[quantization]);
      });
    }
  }

  it('quantized codes take a fraction of the float memory', () => {
    const bytes = Object.fromEntries(
      (['none', 'scalar', 'binary'] as const).map((quantization) => {
        const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
        h.insert(base);
        return [quantization, h.engine.memoryBytes() / N];
      }),
    );
    console.info(`bytes per vector at ${DIMS} dims: ${JSON.stringify(bytes)}`);
    // int8 codes are 1/4 of float32 and binary 1/32, plus the same graph links for all three.
    expect(bytes.scalar!).toBeLessThan(bytes.none! * 0.65);
    expect(bytes.binary!).toBeLessThan(bytes.scalar!);
  });

  it('a restart rebuild answers like the live index', () => {
    const h = engineHarness({ dims: DIMS, distance: 'euclid', quantization: 'scalar' });
    h.insert(base.slice(0, 500));
    const again = h.reload();
    expect(again.size).toBe(500);
    const q = storedForm('euclid', queries[0]!);
    expect(again.search(q, 10).results.map((r) => r.key)).toEqual(h.engine.search(q, 10).results.map((r) => r.key));
  });

  for (const quantization of ['none', 'scalar'] as const) {
    it(`quantization ${quantization}: a start-up load fills the graph in slices, answering exactly and taking writes meanwhile`, () => {
      const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
      h.insert(base, base.map((_, i) => ({ g: i % 4 })));
      const e = h.beginReload();
      expect(e.size).toBe(N);
      expect(e.graphComplete).toBe(false);
      expect(e.fillGraph(0)).toBe(true);
      const q = storedForm('cosine', queries[0]!);
      // Partly filled: an exact scan, so nothing is missed.
      const loading = e.search(q, 10);
      expect(loading.stats.plan).toBe('exact');
      expect(new Set(loading.results.map((r) => r.key))).toEqual(truth('cosine', queries[0]!));
      const inGroup = e.search(q, 5, (p) => p.g === 1).results;
      expect(inGroup.length).toBe(5);
      for (const r of inGroup) expect(e.payloadOfKey(r.key)).toEqual({ g: 1 });
      // Writes while loading, to slots already in the graph (0, 1) and not yet (N - 2, N - 1).
      h.delete([0, N - 1], e);
      h.insert([queries[1]!], [{ g: 9 }], N - 2, e);
      h.insert([queries[2]!], [{ g: 9 }], 1, e);
      let slices = 1;
      while (e.fillGraph(0)) slices++;
      expect(slices).toBeGreaterThan(2);
      expect(e.graphComplete).toBe(true);
      expect(e.size).toBe(N - 2);
      for (const [id, v] of [[N - 2, queries[1]!], [1, queries[2]!]] as const) {
        const found = e.search(storedForm('cosine', v), 10);
        expect(found.stats.plan).toBe('ann');
        expect(found.results[0]!.key).toBe(intKey(id));
      }
      for (const id of [0, N - 1]) {
        const keys = e.search(storedForm('cosine', base[id]!), 10).results.map((r) => r.key);
        expect(keys).not.toContain(intKey(id));
      }
    });
  }

  for (const quantization of ['scalar', 'binary'] as const) {
    it(`quantization ${quantization}: points written after the graph's entry point was deleted stay reachable`, () => {
      const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
      h.insert([base[0]!]);
      h.delete([0]);
      h.insert(base.slice(1, 500), [], 1);
      let hits = 0;
      for (const q of queries.slice(0, 10)) {
        const scored = base.slice(1, 500).map((v, i) => ({ key: intKey(i + 1), s: ref.cosine(v, q) }));
        const want = new Set(scored.sort((a, b) => b.s - a.s).slice(0, 10).map((x) => x.key));
        const { results, stats } = h.engine.search(storedForm('cosine', q), 10);
        expect(stats.plan).toBe('ann');
        hits += results.filter((r) => want.has(r.key)).length;
      }
      expect(hits / 100).toBeGreaterThanOrEqual(BOUNDS[quantization]);
    });
  }

  it('the search beam widens with the index, up to twice ef', () => {
    const wide = engineHarness({ dims: DIMS, distance: 'cosine', quantization: 'none', planner: { ef: 40, wideEfFromPoints: 400 } });
    const q = storedForm('cosine', queries[0]!);
    wide.insert(base.slice(0, 200));
    expect(wide.engine.search(q, 10).stats).toMatchObject({ plan: 'ann', ef: 40 });
    wide.insert(base.slice(200, 300), [], 200);
    expect(wide.engine.search(q, 10).stats.ef).toBe(60);
    wide.insert(base.slice(300, 500), [], 300);
    expect(wide.engine.search(q, 10).stats.ef).toBe(80);
  });

  it('the planner scans exactly for small indexes and selective filters, and uses the graph otherwise', () => {
    const h = engineHarness({ dims: 8, distance: 'cosine', quantization: 'none', planner: { exactMaxPoints: 100, exactMaxCandidates: 50 } });
    const small = clustered(2000, 8, 9);
    h.insert(small.slice(0, 50), small.slice(0, 50).map((_, i) => ({ group: i % 10 })));
    const q = storedForm('cosine', small[1999]!);
    expect(h.engine.search(q, 10).stats.plan).toBe('exact');
    h.insert(small.slice(50, 1900), small.slice(50, 1900).map((_, i) => ({ group: (i + 50) % 10, rare: i === 7 })), 50);
    expect(h.engine.search(q, 10).stats.plan).toBe('ann');
    const rare = (p: Record<string, unknown>) => p.rare === true;
    const r = h.engine.search(q, 10, rare);
    expect(r.stats.plan).toBe('exact');
    expect(r.results.map((x) => x.key)).toEqual([intKey(57)]);
    const common = (p: Record<string, unknown>) => p.group === 3;
    const c = h.engine.search(q, 10, common);
    expect(c.stats.plan).toBe('ann');
    expect(c.results).toHaveLength(10);
  });
});
