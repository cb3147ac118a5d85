import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HnswlibAnn, makeAnn, restoreAnn, type Ann } from '../../src/daemon/services/vector/ann.js';
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

/** The first N points added; returns the live vectors by slot. */
function fillGraph(ann: Ann, data: Float32Array[]): Map<number, Float32Array> {
  const live = new Map<number, Float32Array>();
  for (let slot = 0; slot < N; slot++) {
    ann.add(slot, data[slot]!);
    live.set(slot, data[slot]!);
  }
  return live;
}

/**
 * The writes made during a save: 60 new points (past the graph's capacity, so it would have to
 * grow), 20 old ones removed (tombstones) and 10 of the new ones removed again.
 */
function writeDuringSave(ann: Ann, data: Float32Array[], live: Map<number, Float32Array>): void {
  for (let slot = N; slot < N + 60; slot++) {
    ann.add(slot, data[slot]!);
    live.set(slot, data[slot]!);
  }
  for (const slot of [...Array.from({ length: 20 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => N + i)]) {
    ann.remove(slot);
    live.delete(slot);
  }
}

describe.each(['cosine', 'euclid'] as const)('hnswlib graph during its asynchronous write (%s)', (distance) => {
  it('writes made while hnswlib writes its file are searchable at once, stay out of the file and enter the graph afterwards', async () => {
    const data = clustered(N + 60, DIMS, 21).map((v) => vec(v, distance));
    const ann = new HnswlibAnn(DIMS, distance, 64);
    const live = fillGraph(ann, data);
    const sidecar = join(root, `${distance}.hnsw`);
    const saved = ann.save(sidecar);

    writeDuringSave(ann, data, live);
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

/** A byte copy of a section as it is now. */
const bytesOf = (s: ArrayBufferView) => new Uint8Array(s.buffer, s.byteOffset, s.byteLength).slice();

describe.each([
  ['scalar', 'cosine'],
  ['scalar', 'euclid'],
  ['binary', 'dot'],
] as const)('%s code graph held during a save (%s)', (quantization, distance) => {
  it('its arrays stay byte for byte as saved while writes go on beside it; the writes are searchable at once and enter the graph on release', async () => {
    const data = clustered(N + 60, DIMS, 31).map((v) => vec(v, distance));
    const ann = makeAnn({ dims: DIMS, distance, quantization, sample: data.slice(0, 100), capacity: 64 });
    const live = fillGraph(ann, data);
    const saved = ann.save('');
    const atSave = saved.sections.map(bytesOf);
    expect(() => ann.save('')).toThrow(/already being written/);

    // Inserted, they would fill links and codes in place and set tombstones in `deleted`.
    writeDuringSave(ann, data, live);
    const check = () => {
      // Asked for more than there are, with a beam wider than the index: every live slot, no other.
      expect(new Set(ann.search(data[0]!, N + 100, 2000).map((f) => f.id))).toEqual(new Set(live.keys()));
      // A waiting point is its own nearest code (binary codes tie, so: as near as the nearest);
      // removed ones never come back.
      for (const slot of [N + 10, N + 35, N + 59]) {
        const all = ann.search(data[slot]!, N + 100, 2000);
        expect(all.find((f) => f.id === slot)!.dist).toBe(all[0]!.dist);
        // The same for the scans that skip the graph (selective filters) and rank slots by code.
        const scanned = ann.distances(data[slot]!, [...live.keys()]);
        expect(scanned[[...live.keys()].indexOf(slot)]).toBe(Math.min(...scanned));
      }
      expect(ann.search(data[5]!, 10, 200).some((f) => f.id < 20)).toBe(false);
      const accepted = ann.search(data[N + 20]!, 10, 200, (slot) => slot >= N);
      expect(accepted.length).toBe(10);
      expect(accepted.every((f) => f.id >= N + 10)).toBe(true);
    };
    check();
    saved.sections.forEach((s, i) => expect(Buffer.from(bytesOf(s)).equals(Buffer.from(atSave[i]!))).toBe(true));

    saved.release();
    await settle();
    check();

    // What was saved is the graph as it was at the save: its N points, none of the later writes.
    const restored = restoreAnn({ dims: DIMS, distance, quantization }, saved.meta, atSave);
    expect(new Set(restored.search(data[0]!, N + 100, 2000).map((f) => f.id))).toEqual(new Set(Array.from({ length: N }, (_, i) => i)));

    // A second save includes everything that waited, and the first save's release, called again, does not end its hold.
    const second = ann.save('');
    saved.release();
    expect(() => ann.save('')).toThrow(/already being written/);
    second.release();
    const again = restoreAnn({ dims: DIMS, distance, quantization }, second.meta, second.sections.map(bytesOf));
    expect(new Set(again.search(data[0]!, N + 100, 2000).map((f) => f.id))).toEqual(new Set(live.keys()));
  });
});
