import { describe, expect, it } from 'vitest';
import { apiCall, killDaemon, loginToken, spawnDaemonProcess, spawnedHome } from '../helpers/daemon-process.js';
import { clustered, idx, ref, waitFor } from './helpers.js';

/**
 * Float graphs built by a worker thread (issue 26, third pass): the worker inserts, snapshots are
 * swapped in on the event loop, waiting points are searched exactly meanwhile. Spawned daemons
 * (the build worker's test hook is read from the process environment), real HTTP.
 */

type Vectors = Map<number, number[]>;

/** Ids of the exact top `k` by cosine among `points`, for a query. */
const exactTop = (points: Vectors, q: number[], k: number) =>
  [...points]
    .map(([id, v]) => ({ id, s: ref.cosine(v, q) }))
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.id);

const ENV = { PLATFORM_VECTOR_READY_DELAY_MS: '0', PLATFORM_VECTOR_EXACT_MAX_POINTS: '0' };

/** A spawned daemon with its token and the default project, and helpers over its index routes. */
async function daemon(home: string, env: Record<string, string>) {
  const proc = await spawnDaemonProcess(home, env);
  const token = await loginToken(proc.url);
  const call = (method: string, path: string, body?: unknown) => apiCall(proc.url, method, path, token, body);
  const project = (await call('GET', '/v1/projects')).body.projects.find((p: { slug: string }) => p.slug === 'default').id as string;
  const index = (name: string) => ({
    path: idx(project, name),
    create: async (dimensions: number) => {
      expect((await call('POST', idx(project), { name, dimensions, distance: 'cosine' })).status).toBe(201);
      await waitFor(async () => (await call('GET', idx(project, name))).body.index.ready === true);
    },
    upsert: async (points: Array<{ id: number; vector: number[]; payload?: Record<string, unknown> }>) => {
      const r = await call('POST', `${idx(project, name)}:upsert`, { points });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    },
    query: async (vector: number[], top_k: number, filter?: unknown): Promise<number[]> => {
      const r = await call('POST', `${idx(project, name)}:query`, { vector, top_k, ...(filter ? { filter } : {}) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.results.map((x: { id: number }) => x.id);
    },
    status: async () => (await call('GET', idx(project, name))).body.index.collection_status as string,
    ids: async () => {
      const ids: number[] = [];
      let offset: number | undefined;
      do {
        const s = await call('POST', `${idx(project, name)}:scroll`, { limit: 1000, ...(offset !== undefined ? { offset } : {}) });
        ids.push(...s.body.points.map((p: { id: number }) => p.id));
        offset = s.body.next_offset;
      } while (offset !== undefined);
      return ids;
    },
  });
  return { proc, call, index };
}

/** Share of the exact top 10 that a daemon's answers hold, over probes near stored points. */
async function recallAt10(query: (v: number[], k: number) => Promise<number[]>, live: Vectors, probes: number[]): Promise<number> {
  let hits = 0;
  for (const id of probes) {
    const q = live.get(id)!.map((x, i) => x + (i % 5) * 0.02);
    const want = exactTop(live, q, 10);
    hits += (await query(q, 10)).filter((x) => want.includes(x)).length;
  }
  return hits / (probes.length * 10);
}

describe('a float graph built by a worker thread (spawned daemon)', () => {
  const run = spawnedHome('platform-vector-build-worker-');
  const home = run.home;

  it('searches during the build answer as the exact scan, and deletes and overwrites hold across snapshots', { timeout: 60_000 }, async () => {
    // Each snapshot waits 400 ms between its read and its swap: the deletes below land in between.
    const d = await daemon(home, { ...ENV, PLATFORM_VECTOR_TEST_BUILD_SNAPSHOT_DELAY_MS: '400' });
    run.proc = d.proc;
    const ix = d.index('swaps');
    const DIMS = 48;
    await ix.create(DIMS);
    const data = clustered(2400, DIMS, 21);
    const live: Vectors = new Map();
    const statuses = new Set<string>();
    let hits = 0;
    let asked = 0;
    for (let b = 0; b < data.length; b += 200) {
      const points = data.slice(b, b + 200).map((vector, j) => ({ id: b + j, vector, payload: { odd: (b + j) % 2 } }));
      await ix.upsert(points);
      for (const p of points) live.set(p.id, p.vector);
      statuses.add(await ix.status());
      // The batch just acknowledged is found by the next search, whether or not a snapshot holds it yet.
      expect((await ix.query(points[77]!.vector, 1))[0]).toBe(b + 77);
      const q = data[(b * 7) % (b + 200)]!.map((x, i) => x + (i % 3) * 0.05);
      const want = exactTop(live, q, 10);
      hits += (await ix.query(q, 10)).filter((x) => want.includes(x)).length;
      const oddWant = exactTop(new Map([...live].filter(([id]) => id % 2 === 1)), q, 5);
      hits += (await ix.query(q, 5, { must: [{ key: 'odd', match: { value: 1 } }] })).filter((x) => oddWant.includes(x)).length;
      asked += 15;
      if (b === 1000) {
        // Mid-build: points 20-29 turned around (overwritten by their opposites).
        const turned = Array.from({ length: 10 }, (_, i) => ({ id: 20 + i, vector: data[20 + i]!.map((x) => -x), payload: { odd: (20 + i) % 2 } }));
        await ix.upsert(turned);
        for (const p of turned) live.set(p.id, p.vector);
      }
    }
    // Deletes while the last snapshots are taken and swapped in, one every 50 ms until the graph is
    // whole (each snapshot's swap waits 400 ms, so some land between a snapshot and its swap; no
    // event tells the test when a snapshot is taken). The swapped-in graph was copied before those
    // deletes and, with no insertion left to prompt another snapshot, must apply them itself.
    const deleted: number[] = [];
    let whole = false;
    for (let id = 100; !whole || deleted.length < 30; id += 7) {
      expect((await d.call('POST', `${ix.path}:delete-points`, { ids: [id] })).status).toBe(200);
      live.delete(id);
      deleted.push(id);
      whole ||= (await ix.status()) === 'green';
      await new Promise((r) => setTimeout(r, 50));
    }
    // The graph fell behind the clients at some point: these searches ran during a build.
    expect(statuses.has('yellow')).toBe(true);
    expect(hits / asked).toBeGreaterThanOrEqual(0.97);
    // Green: every point is in the swapped-in graph, which must honour what changed after its snapshots were taken.
    expect(d.proc.stderr()).toMatch(/"msg":"vector graph build worker started"/);
    for (const id of deleted) {
      const top = await ix.query(data[id]!, 10);
      // A deleted point the graph still held would take a place in the top 10, as a point without an id.
      expect(top).toHaveLength(10);
      for (const x of top) expect(live.has(x), `answered ${String(x)} for deleted point ${id}`).toBe(true);
    }
    for (let i = 20; i < 30; i++) {
      expect(await ix.query(data[i]!, 10)).not.toContain(i);
      expect((await ix.query(live.get(i)!, 1))[0]).toBe(i);
    }
    const probes = Array.from({ length: 40 }, (_, i) => 30 + i * 59).filter((id) => live.has(id));
    expect(await recallAt10(ix.query, live, probes)).toBeGreaterThanOrEqual(0.97);
  });

  it('a point acknowledged while the worker builds is found by the next search and survives kill -9', { timeout: 90_000 }, async () => {
    await killDaemon(run.proc);
    let d = await daemon(home, ENV);
    run.proc = d.proc;
    let ix = d.index('crash');
    const DIMS = 256;
    const N = 3000;
    await ix.create(DIMS);
    const data = clustered(N, DIMS, 8);
    const live: Vectors = new Map(data.map((v, id) => [id, v] as const));
    for (let b = 0; b < N; b += 250) {
      await ix.upsert(data.slice(b, b + 250).map((vector, j) => ({ id: b + j, vector })));
      expect((await ix.query(data[b + 249]!, 1))[0]).toBe(b + 249);
    }
    // 3,000 x 256 takes the worker seconds: it is still building when the process dies.
    expect(await ix.status()).toBe('yellow');
    await killDaemon(run.proc);

    d = await daemon(home, ENV);
    run.proc = d.proc;
    ix = d.index('crash');
    expect(await ix.ids()).toEqual(Array.from({ length: N }, (_, i) => i));
    expect((await ix.query(data[N - 1]!, 1))[0]).toBe(N - 1);
    await waitFor(async () => (await ix.status()) === 'green', 60_000);
    for (let id = 0; id < N; id += 250) expect((await ix.query(data[id]!, 1))[0]).toBe(id);
    expect(await recallAt10(ix.query, live, [5, 777, 1500, 2222, 2999])).toBeGreaterThanOrEqual(0.95);
  });
});

describe('a build worker that dies (spawned daemon, test hook)', () => {
  const run = spawnedHome('platform-vector-build-worker-dies-');
  const home = run.home;

  it('loses no point: another worker takes over, then the event loop, and the daemon keeps answering', { timeout: 60_000 }, async () => {
    // Every worker exits after 300 insertions, as a crashed one would.
    const d = await daemon(home, { ...ENV, PLATFORM_VECTOR_TEST_BUILD_WORKER_EXIT_AFTER: '300' });
    run.proc = d.proc;
    const ix = d.index('dying');
    const DIMS = 32;
    const N = 2000;
    await ix.create(DIMS);
    const data = clustered(N, DIMS, 4);
    for (let b = 0; b < N; b += 200) {
      await ix.upsert(data.slice(b, b + 200).map((vector, j) => ({ id: b + j, vector })));
      expect((await ix.query(data[b + 150]!, 1))[0]).toBe(b + 150);
      expect((await fetch(`${d.proc.url}/healthz`)).status).toBe(200);
    }
    await waitFor(async () => (await ix.status()) === 'green', 40_000);
    expect(d.proc.stderr()).toMatch(/"msg":"vector graph build worker died; starting another"/);
    expect(d.proc.stderr()).toMatch(/"msg":"vector graph build worker died; building on the event loop from now on"/);
    expect(await ix.ids()).toHaveLength(N);
    for (let id = 0; id < N; id += 97) expect((await ix.query(data[id]!, 1))[0]).toBe(id);
    const live: Vectors = new Map(data.map((v, id) => [id, v] as const));
    expect(await recallAt10(ix.query, live, [3, 500, 1000, 1500, 1999])).toBeGreaterThanOrEqual(0.95);
    // Writes after the fallback still enter the graph (on the event loop).
    await ix.upsert([{ id: N, vector: data[0]!.map((x) => -x) }]);
    expect((await ix.query(data[0]!.map((x) => -x), 1))[0]).toBe(N);
    await waitFor(async () => (await ix.status()) === 'green', 10_000);
  });
});
