import { mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IndexEngine } from '../../src/daemon/services/vector/engine.js';
import { GraphSaves } from '../../src/daemon/services/vector/graph-saves.js';
import type { IndexRow, VectorStore } from '../../src/daemon/services/vector/store.js';
import { intKey } from '../../src/daemon/services/vector/point-ids.js';
import { storedForm } from '../../src/daemon/services/vector/scoring.js';
import { clustered, ref } from './data.js';
import { engineHarness } from './engine-harness.js';

const root = mkdtempSync(join(tmpdir(), 'platform-graph-saves-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DIMS = 32;
const N = 2000;

/** Recall@10 of an engine's answers against exact cosine search over the live vectors. */
function recall(engine: IndexEngine, live: Map<number, number[]>, queries: number[][]): number {
  const liveKeys = new Set([...live.keys()].map(intKey));
  let hit = 0;
  for (const q of queries) {
    const exact = [...live]
      .map(([id, v]) => ({ key: intKey(id), s: ref.cosine(v, q) }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 10)
      .map((x) => x.key);
    const got = engine.search(Float32Array.from(storedForm('cosine', q)), 10).results.map((r) => r.key);
    for (const k of got) expect(liveKeys.has(k)).toBe(true);
    hit += got.filter((k) => exact.includes(k)).length;
  }
  return hit / (queries.length * 10);
}

describe.each(['none', 'scalar', 'binary'] as const)('saved graphs (%s)', (quantization) => {
  const dir = join(root, quantization);
  const row = { id: 'i', dimensions: DIMS, distance: 'cosine', q_kind: quantization } as IndexRow;
  /** A fresh engine over the same rows, started from index i's save; the planner always uses the graph. */
  const loadSaved = (store: VectorStore, saves: GraphSaves) => {
    const engine = new IndexEngine({ id: 'i', dims: DIMS, distance: 'cosine', quantization, payloadOnDisk: false }, store, {
      exactMaxPoints: 0,
      exactMaxCandidates: 0,
      ef: 128,
      wideEfFromPoints: 250_000,
    });
    engine.beginLoad(saves.load(row));
    return engine;
  };

  it('a load keeps unchanged slots, drops deleted and rewritten ones and reinserts only what changed after the save', async () => {
    const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
    const data = clustered(N + 300, DIMS, 5);
    h.insert(data.slice(0, N));
    const saves = new GraphSaves(dir);
    expect(await saves.save('i', h.engine, h.store.writeSeq('i'))).toBe(true);
    expect(h.engine.changes).toBe(0);

    // After the save: 200 new points, 100 rewritten with other vectors, 100 deleted.
    h.insert(data.slice(N, N + 200), [], N);
    h.insert(data.slice(N + 200, N + 300), [], 0);
    h.delete(Array.from({ length: 100 }, (_, i) => 100 + i));
    const live = new Map<number, number[]>();
    data.slice(0, N + 200).forEach((v, id) => live.set(id, v));
    data.slice(N + 200, N + 300).forEach((v, i) => live.set(i, v));
    for (let id = 100; id < 200; id++) live.delete(id);

    const loaded = loadSaved(h.store, saves);
    expect(loaded.size).toBe(live.size);
    // Only the 200 new and 100 rewritten points are inserted; 200 old slots leave the graph.
    expect(loaded.pendingFill).toBe(300);
    expect(loaded.changes).toBe(200);
    // Until they are in, queries scan exactly and still see every live point.
    const queries = clustered(20, DIMS, 99);
    expect(recall(loaded, live, queries)).toBe(1);
    loaded.fillGraph(Infinity);
    expect(loaded.graphComplete).toBe(true);
    expect(loaded.changes).toBe(500);
    // As good as a graph rebuilt from the same rows (binary codes of 32 dimensions are coarse for both).
    expect(recall(loaded, live, queries)).toBeGreaterThanOrEqual(recall(h.reload(), live, queries) - 0.03);
    // The rewritten points answer with their new vectors.
    const top = loaded.search(Float32Array.from(storedForm('cosine', data[N + 200]!)), 1).results[0]!;
    expect(top.key).toBe(intKey(0));
    expect(top.score).toBeCloseTo(1, 5);
  });

  it('an unreadable save throws (the daemon then rebuilds), and a still-filling graph is not saved', async () => {
    const saves = new GraphSaves(dir);
    const path = join(dir, 'i.graph');
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 7));
    expect(() => saves.load(row)).toThrow(/truncated|trailing|match/);
    writeFileSync(path, 'junk');
    expect(() => saves.load(row)).toThrow(/not a saved graph/);

    const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
    h.insert(clustered(300, DIMS, 6));
    const filling = h.beginReload();
    filling.fillGraph(0);
    expect(filling.graphComplete).toBe(false);
    expect(await saves.save('j', filling, 1)).toBe(false);
    saves.remove('i');
    expect(readdirSync(dir).filter((f) => f.startsWith('i.'))).toEqual([]);
  });

  it('writes made while a save flushes to disk are not in it, and a load reinserts them', async () => {
    const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
    const data = clustered(N + 100, DIMS, 11);
    h.insert(data.slice(0, N));
    const saves = new GraphSaves(join(dir, 'flush'));
    const seq = h.store.writeSeq('i');
    const saving = saves.save('i', h.engine, seq);
    // The save read the graph before returning its promise: these land after it.
    h.insert(data.slice(N), [], N);
    h.delete(Array.from({ length: 50 }, (_, i) => i));
    expect(h.engine.changes).toBe(150);
    expect(await saving).toBe(true);

    const loaded = loadSaved(h.store, saves);
    expect(loaded.size).toBe(N + 100 - 50);
    expect(loaded.pendingFill).toBe(100);
    expect(loaded.changes).toBe(50);
  });

  it('a save that fails gives its changes back and leaves no files', async () => {
    const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
    h.insert(clustered(200, DIMS, 12));
    const gone = join(dir, 'gone');
    const saves = new GraphSaves(gone);
    const before = h.engine.changes;
    const saving = saves.save('i', h.engine, 1);
    expect(h.engine.changes).toBe(0);
    // The directory disappears before the rename into place.
    rmSync(gone, { recursive: true, force: true });
    await expect(saving).rejects.toThrow(/ENOENT/);
    expect(h.engine.changes).toBe(before);
  });

  it('a save of another quantization is refused rather than misread', async () => {
    const h = engineHarness({ dims: DIMS, distance: 'cosine', quantization });
    h.insert(clustered(100, DIMS, 7));
    const saves = new GraphSaves(dir);
    await saves.save('k', h.engine, 1);
    const other = quantization === 'none' ? 'scalar' : 'none';
    expect(() => saves.load({ ...row, id: 'k', q_kind: other })).toThrow(/saved as .*, the index needs/);
  });
});

describe('saved graphs on disk', () => {
  it('a save that is mostly tombstones is ignored, so the rebuild compacts it', async () => {
    const h = engineHarness({ dims: 8, distance: 'cosine', quantization: 'scalar' });
    h.insert(clustered(100, 8, 8));
    h.delete(Array.from({ length: 60 }, (_, i) => i));
    const saves = new GraphSaves(join(root, 'tomb'));
    expect(await saves.save('i', h.engine, h.store.writeSeq('i'))).toBe(true);
    expect(saves.load({ id: 'i', dimensions: 8, distance: 'cosine', q_kind: 'scalar' } as IndexRow)).toBeUndefined();
  });

  it('prune removes the files of indexes that no longer exist and saves cut short', async () => {
    const dir = join(root, 'prune');
    const h = engineHarness({ dims: 8, distance: 'dot', quantization: 'none' });
    h.insert(clustered(50, 8, 9));
    const saves = new GraphSaves(dir);
    await saves.save('keep', h.engine, 1);
    await saves.save('gone', h.engine, 1);
    writeFileSync(join(dir, 'keep.graph.tmp'), 'cut short');
    expect(readdirSync(dir).filter((f) => f.startsWith('gone.'))).toHaveLength(2);
    saves.prune(new Set(['keep']));
    expect(readdirSync(dir).sort()).toEqual(readdirSync(dir).filter((f) => f.startsWith('keep.')).sort());
    expect(readdirSync(dir)).toHaveLength(2);
  });
});
