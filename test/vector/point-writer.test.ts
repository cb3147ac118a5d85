import { describe, expect, it } from 'vitest';
import { apiCall, killDaemon, loginToken, spawnDaemonProcess, spawnedHome } from '../helpers/daemon-process.js';
import { clustered, idx, waitFor } from './helpers.js';

/**
 * Upsert commits made by the point writer's thread (issue 26, fourth pass): the answer follows the
 * commit and the engine's update, writes on the daemon's own connection wait for the batches in
 * flight, and a writer that dies loses nothing. Spawned daemons (the writer's test hook is read from
 * the process environment), real HTTP, kill -9.
 */

const ENV = { PLATFORM_VECTOR_READY_DELAY_MS: '0', PLATFORM_VECTOR_EXACT_MAX_POINTS: '0' };

async function daemon(home: string, env: Record<string, string>) {
  const proc = await spawnDaemonProcess(home, env);
  const token = await loginToken(proc.url);
  const call = (method: string, path: string, body?: unknown) => apiCall(proc.url, method, path, token, body);
  const project = (await call('GET', '/v1/projects')).body.projects.find((p: { slug: string }) => p.slug === 'default').id as string;
  const path = idx(project, 'writes');
  const ok = async (verb: string, body: unknown) => {
    const r = await call('POST', `${path}:${verb}`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const ix = {
    create: async (dimensions: number) => {
      expect((await call('POST', idx(project), { name: 'writes', dimensions, distance: 'cosine' })).status).toBe(201);
      await waitFor(async () => (await call('GET', path)).body.index.ready === true);
    },
    upsert: (points: Array<{ id: number; vector: number[]; payload?: Record<string, unknown> }>) => ok('upsert', { points }),
    remove: (ids: number[]) => ok('delete-points', { ids }),
    nearest: async (vector: number[]) => (await ok('query', { vector, top_k: 1 })).results[0]?.id as number | undefined,
    /** The engine's live count. */
    count: async () => (await ok('count', {})).count as number,
    /** Every id SQLite holds, in id order. */
    ids: async () => {
      const ids: number[] = [];
      let offset: number | undefined;
      do {
        const s = await ok('scroll', { limit: 1000, ...(offset !== undefined ? { offset } : {}) });
        ids.push(...s.points.map((p: { id: number }) => p.id));
        offset = s.next_offset;
      } while (offset !== undefined);
      return ids;
    },
  };
  return { proc, ix };
}

/** The engine (searches, count) and SQLite (scroll) hold the same points. */
async function expectEngineMatchesStore(ix: Awaited<ReturnType<typeof daemon>>['ix'], data: number[][]): Promise<number[]> {
  const stored = await ix.ids();
  expect(await ix.count()).toBe(stored.length);
  const present = new Set(stored);
  for (let id = 0; id < data.length; id += 7) {
    const found = await ix.nearest(data[id]!);
    if (present.has(id)) expect(found, `point ${id} is stored`).toBe(id);
    else expect(found, `point ${id} is not stored`).not.toBe(id);
  }
  return stored;
}

describe('upserts committed by the point writer', () => {
  const run = spawnedHome('platform-vector-point-writer-');
  const home = run.home;

  it('deletes racing the commits leave SQLite and the engine alike, also after kill -9', { timeout: 60_000 }, async () => {
    let d = await daemon(home, ENV);
    run.proc = d.proc;
    const DIMS = 64;
    const N = 2000;
    const BATCH = 250;
    await d.ix.create(DIMS);
    const data = clustered(N, DIMS, 6);
    // Each batch's delete of every other id is sent while the batch is on its way (parse, commit):
    // whichever lands first, both stores must agree on the outcome.
    const writes: Array<Promise<unknown>> = [];
    for (let b = 0; b < N; b += BATCH) {
      writes.push(d.ix.upsert(data.slice(b, b + BATCH).map((vector, j) => ({ id: b + j, vector, payload: { b } }))));
      writes.push(d.ix.remove(Array.from({ length: BATCH / 2 }, (_, j) => b + 2 * j)));
    }
    await Promise.all(writes);
    const before = await expectEngineMatchesStore(d.ix, data);
    // Every odd id was never deleted: all of them are there.
    for (let id = 1; id < N; id += 2) expect(before.includes(id)).toBe(true);

    await killDaemon(run.proc);
    d = await daemon(home, ENV);
    run.proc = d.proc;
    expect(await d.ix.ids()).toEqual(before);
    await expectEngineMatchesStore(d.ix, data);
  });
});

describe('a write between a commit and its answer (spawned daemon, test hook)', () => {
  const run = spawnedHome('platform-vector-point-writer-late-');
  const home = run.home;

  it('a delete of committed, unanswered points applies after them in the engine as in SQLite', { timeout: 60_000 }, async () => {
    // Each commit is answered 3 s late: the batch is in SQLite, not yet in the engine.
    let d = await daemon(home, { ...ENV, PLATFORM_VECTOR_TEST_POINT_WRITER_REPLY_DELAY_MS: '3000' });
    run.proc = d.proc;
    const DIMS = 16;
    await d.ix.create(DIMS);
    const data = clustered(100, DIMS, 2);
    let answered = false;
    const upsert = d.ix.upsert(data.map((vector, id) => ({ id, vector }))).then(() => (answered = true));
    // Committed (scroll reads SQLite) while the answer is still on its way.
    await waitFor(async () => (await d.ix.ids()).length === 100, 20_000);
    expect(answered).toBe(false);
    await d.ix.remove(data.map((_, id) => id).filter((id) => id % 2 === 0));
    await upsert;
    // Without the wait for the batch, the engine applied it after the delete and still held the even ids.
    const stored = await expectEngineMatchesStore(d.ix, data);
    expect(stored).toEqual(data.map((_, id) => id).filter((id) => id % 2 === 1));

    await killDaemon(run.proc);
    d = await daemon(home, ENV);
    run.proc = d.proc;
    expect(await d.ix.ids()).toEqual(stored);
  });
});

describe('a point writer that dies (spawned daemon, test hook)', () => {
  const run = spawnedHome('platform-vector-point-writer-dies-');
  const home = run.home;

  it('answers every batch once committed: the unanswered one is committed again, later ones on the event loop', { timeout: 60_000 }, async () => {
    // The writer's thread ends after its third commit, before answering it.
    let d = await daemon(home, { ...ENV, PLATFORM_VECTOR_TEST_POINT_WRITER_EXIT_AFTER: '3' });
    run.proc = d.proc;
    const DIMS = 32;
    const N = 2000;
    const BATCH = 200;
    await d.ix.create(DIMS);
    const data = clustered(N, DIMS, 4);
    for (let b = 0; b < N / 2; b += BATCH) {
      await d.ix.upsert(data.slice(b, b + BATCH).map((vector, j) => ({ id: b + j, vector })));
      expect(await d.ix.nearest(data[b + BATCH - 1]!)).toBe(b + BATCH - 1);
    }
    // And batches in flight together once the event loop commits.
    await Promise.all(
      Array.from({ length: N / 2 / BATCH }, (_, i) => N / 2 + i * BATCH).map((b) => d.ix.upsert(data.slice(b, b + BATCH).map((vector, j) => ({ id: b + j, vector })))),
    );
    expect(d.proc.stderr()).toMatch(/"msg":"vector point writer stopped; commits run on the event loop"/);
    expect(await expectEngineMatchesStore(d.ix, data)).toHaveLength(N);

    await killDaemon(run.proc);
    d = await daemon(home, ENV);
    run.proc = d.proc;
    expect(await d.ix.ids()).toEqual(Array.from({ length: N }, (_, i) => i));
    await expectEngineMatchesStore(d.ix, data);
  });
});
