import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HnswlibAnn, restoreAnn } from '../../src/daemon/services/vector/ann.js';
import type { Distance } from '../../src/api/vector.js';
import { storedForm } from '../../src/daemon/services/vector/scoring.js';
import { clustered } from './data.js';

const root = mkdtempSync(join(tmpdir(), 'platform-write-hold-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DIMS = 16;
const N = 400;
const vec = (v: number[], distance: Distance) => Float32Array.from(storedForm(distance, v));

/** Slots of the exact top k by hnswlib's distance over the given live vectors. */
function exactTop(live: Map<number, Float32Array>, q: Float32Array, k: number, distance: Distance): number[] {
  const d = (v: Float32Array) =>
    distance === 'euclid' ? v.reduce((s, x, i) => s + (x - q[i]!) ** 2, 0) : 1 - v.reduce((s, x, i) => s + x * q[i]!, 0);
  return [...live]
    .map(([slot, v]) => ({ slot, dist: d(v) }))
    .sort((a, b) => a.dist - b.dist)
    .slice(0, k)
    .map((x) => x.slot);
}

const settle = () => new Promise((r) => setTimeout(r, 50));

describe.each(['cosine', 'euclid'] as const)('hnswlib graph during its asynchronous write (%s)', (distance) => {
  it('writes made while hnswlib writes its file are searchable at once, stay out of the file and enter the graph afterwards', async () => {
    const data = clustered(N + 60, DIMS, 21).map((v) => vec(v, distance));
    const ann = new HnswlibAnn(DIMS, distance, 64);
    const live = new Map<number, Float32Array>();
    for (let slot = 0; slot < N; slot++) {
      ann.add(slot, data[slot]!);
      live.set(slot, data[slot]!);
    }
    const sidecar = join(root, `${distance}.hnsw`);
    const saved = ann.save(sidecar);

    // During the write: 60 new points (past the capacity, so the graph must grow later), 20 old
    // ones removed and 10 of the new ones removed again.
    for (let slot = N; slot < N + 60; slot++) {
      ann.add(slot, data[slot]!);
      live.set(slot, data[slot]!);
    }
    for (let slot = 0; slot < 20; slot++) {
      ann.remove(slot);
      live.delete(slot);
    }
    for (let slot = N; slot < N + 10; slot++) {
      ann.remove(slot);
      live.delete(slot);
    }
    const queries = clustered(10, DIMS, 22).map((v) => vec(v, distance));
    // A beam wider than the index makes the graph search exact, so answers must match exactly.
    const check = () => {
      for (const q of queries) expect(ann.search(q, 10, 1000).map((f) => f.id)).toEqual(exactTop(live, q, 10, distance));
      const accepted = ann.search(queries[0]!, 10, 1000, (slot) => slot >= N);
      expect(accepted.length).toBe(10);
      expect(accepted.every((f) => f.id >= N + 10)).toBe(true);
    };
    check();

    await saved.written;
    await settle();
    check();

    // The file holds the graph as it was when the save began.
    const restored = restoreAnn({ dims: DIMS, distance, quantization: 'none' }, saved.meta, []);
    const before = new Map([...data.slice(0, N)].map((v, slot) => [slot, v]));
    for (const q of queries) expect(restored.search(q, 10, 1000).map((f) => f.id)).toEqual(exactTop(before, q, 10, distance));
  });

  it('a second save while the first is being written is refused, and one after it includes what waited', async () => {
    const data = clustered(120, DIMS, 23).map((v) => vec(v, distance));
    const ann = new HnswlibAnn(DIMS, distance, 200);
    for (let slot = 0; slot < 100; slot++) ann.add(slot, data[slot]!);
    const first = ann.save(join(root, `${distance}-a.hnsw`));
    for (let slot = 100; slot < 120; slot++) ann.add(slot, data[slot]!);
    expect(() => ann.save(join(root, `${distance}-b.hnsw`))).toThrow(/already being written/);
    await first.written;
    // Taken at once, before the slices after the write have run: the save moves them in first.
    const second = ann.save(join(root, `${distance}-c.hnsw`));
    await second.written;
    expect(second.meta).toMatchObject({ live: 120 });
    const restored = restoreAnn({ dims: DIMS, distance, quantization: 'none' }, second.meta, []);
    expect(restored.search(data[119]!, 1, 200)[0]!.id).toBe(119);
  });
});
