import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, killDaemon, loginToken, spawnDaemonProcess, spawnedHome, type DaemonProcess } from '../helpers/daemon-process.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { clustered, idx, readyIndex, ref, startVectorDaemon, waitFor } from './helpers.js';

/** Ids of the exact top `k` by cosine among `points`, for a query. */
const exactTop = (points: Map<number, number[]>, q: number[], k: number) =>
  [...points]
    .map(([id, v]) => ({ id, s: ref.cosine(v, q) }))
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.id);

describe('acknowledged points are searchable at once while the graph builds (issue 26)', () => {
  let d: TestDaemon;
  let token: string;
  let project: string;
  beforeAll(async () => {
    // The test hook holds the builder: every upserted point stays beside the graph.
    d = await startVectorDaemon({ exactMaxPoints: 0, pauseGraphBuild: true });
    token = await d.adminToken();
    project = (d.db.prepare(`SELECT id FROM acct_projects WHERE slug = 'default'`).get() as { id: string }).id;
  });
  afterAll(() => d.close());

  const api = (name: string, verb: string, body: unknown) => d.api('POST', `${idx(project, name)}:${verb}`, { token, body });

  it('each acknowledged batch is found by the very next search, filtered or not, and deletes apply at once', async () => {
    const DIMS = 32;
    await readyIndex(d, token, project, { name: 'tail', dimensions: DIMS, distance: 'cosine' });
    const data = clustered(4 * 256, DIMS, 5);
    const live = new Map<number, number[]>();
    for (let b = 0; b < 4; b++) {
      const points = data.slice(b * 256, (b + 1) * 256).map((vector, j) => ({ id: b * 256 + j, vector, payload: { batch: b } }));
      const up = await api('tail', 'upsert', { points });
      expect(up.status, up.text).toBe(200);
      for (const p of points) live.set(p.id, p.vector);
      const probe = points[17]!;
      const q = await api('tail', 'query', { vector: probe.vector, top_k: 10 });
      expect(q.body.results[0]).toMatchObject({ id: probe.id, score: expect.closeTo(1, 5), payload: { batch: b } });
      expect(q.body.results.map((r: { id: number }) => r.id)).toEqual(exactTop(live, probe.vector, 10));
      const filtered = await api('tail', 'query', { vector: probe.vector, top_k: 3, filter: { must: [{ key: 'batch', match: { value: b } }] } });
      expect(filtered.body.results.map((r: { id: number }) => r.id)).toEqual(exactTop(new Map([...live].filter(([id]) => Math.floor(id / 256) === b)), probe.vector, 3));
    }
    // The graph has not taken a single point: the index says it is still building.
    expect((await d.api('GET', idx(project, 'tail'), { token })).body.index.collection_status).toBe('yellow');
    expect((await api('tail', 'delete-points', { ids: [17] })).status).toBe(200);
    const gone = await api('tail', 'query', { vector: data[17], top_k: 1 });
    expect(gone.body.results[0].id).not.toBe(17);
  });

  it('waiting points are ranked exactly by the SIMD scan (widths of 8s) and by the JavaScript one (other widths)', async () => {
    for (const [dims, distance] of [[40, 'euclid'], [12, 'euclid'], [12, 'cosine']] as const) {
      const name = `scan-${dims}-${distance}`;
      await readyIndex(d, token, project, { name, dimensions: dims, distance });
      const data = clustered(600, dims, dims);
      const up = await api(name, 'upsert', { points: data.map((vector, id) => ({ id, vector, payload: { odd: id % 2 } })) });
      expect(up.status, up.text).toBe(200);
      const score = distance === 'euclid' ? (a: number[], b: number[]) => -ref.euclid(a, b) : ref.cosine;
      const top = (q: number[], keep: (id: number) => boolean) =>
        data.map((v, id) => ({ id, s: score(v, q) })).filter((x) => keep(x.id)).sort((a, b) => b.s - a.s).slice(0, 10).map((x) => x.id);
      for (const probe of [3, 301, 598]) {
        const q = data[probe]!.map((x, i) => x + (i % 3) * 0.01);
        const all = await api(name, 'query', { vector: q, top_k: 10 });
        expect(all.body.results.map((r: { id: number }) => r.id), name).toEqual(top(q, () => true));
        const odd = await api(name, 'query', { vector: q, top_k: 10, filter: { must: [{ key: 'odd', match: { value: 1 } }] } });
        expect(odd.body.results.map((r: { id: number }) => r.id), name).toEqual(top(q, (id) => id % 2 === 1));
      }
    }
  });

  it('numbers read straight from the body are stored as the float32 of the double JSON.parse reads', async () => {
    await readyIndex(d, token, project, { name: 'numbers', dimensions: 8, distance: 'euclid' });
    // Exponents, signs, long mantissas, a subnormal, the exact midpoint between 1 and the next
    // float32 (ties to even: 1) and a number just past it whose double is that midpoint too;
    // payloads whose strings hold brackets; whitespace wherever JSON allows it. Then a component
    // of 1e17 or more, which sends its body through JSON.parse.
    const scanned = `{ "points" :
      [ { "id" : 1 , "vector" : [ 1e2, 1E+2 , -1.5e-3,0.0, -0, 0.1, 12.5e-30, 1e-50 ] , "payload" : {"s": "a ] } , [ {\\"", "n": [1, {"x": null}]} },
        {"payload":null,"vector":[0.30000000000000004,123456789.123456789,1.00000005960464477539,1.0000000596046449,0.1234567890123456789012345,-7.006492321624085e-46,4.9e-324,99999999999999999e-1],"id":"6a7f0c2e-1d2b-4c3a-9e8f-0a1b2c3d4e5f"}
      ]
    }`;
    const parsed = '{"points":[{"id":3,"vector":[5e17,0,0,0,0,0,0,-1.00000005960464477539]}]}';
    const sent: Array<{ id: unknown; vector: number[]; payload?: unknown }> = [];
    for (const raw of [scanned, parsed]) {
      const up = await d.api('POST', `${idx(project, 'numbers')}:upsert`, { token, raw, headers: { 'content-type': 'application/json' } });
      expect(up.status, up.text).toBe(200);
      sent.push(...JSON.parse(raw).points);
    }
    for (const p of sent) {
      const want = JSON.parse(JSON.stringify(Array.from(Float32Array.from(p.vector))));
      const q = await api('numbers', 'query', { vector: want, top_k: 1, with_vector: true });
      expect(q.body.results[0], JSON.stringify(p.vector)).toMatchObject({ id: p.id, vector: want, payload: p.payload ?? {} });
    }
  });

  it('cosine rows normalized by the parse worker are the float32s the event loop computed, on both parse paths and in reused body memory', async () => {
    const DIMS = 768;
    await readyIndex(d, token, project, { name: 'unit', dimensions: DIMS, distance: 'cosine' });
    // scoring.ts's normalized(): a double sum of the float32 squares, each component divided as a double.
    const unit = (v: number[]) => {
      const f = Float32Array.from(v);
      let squared = 0;
      for (const x of f) squared += x * x;
      const n = Math.sqrt(squared);
      return JSON.parse(JSON.stringify(Array.from(n > 0 ? f.map((x) => x / n) : f))) as number[];
    };
    const random = (seed: number) => Array.from({ length: DIMS }, (_, i) => Math.sin(seed * 7919 + i * 104729) * (1 + (i % 7)));
    // Bodies of 128 x 768 (about 2 MB: many socket chunks, assembled by a parse thread in memory it
    // keeps), with a bad one of the same size after the first two (refused, its memory sent back for
    // the ordinary path's message, so the next body on that thread is assembled in fresh memory), then
    // one sent through JSON.parse (a component of 1e17 or more) holding a zero vector, which stays zero.
    const batches = [0, 1, 2, 3].map((b) => Array.from({ length: 128 }, (_, j) => ({ id: b * 128 + j, vector: random(b * 128 + j) })));
    batches.push([{ id: 600, vector: [5e17, ...random(600).slice(1)] }, { id: 601, vector: new Array<number>(DIMS).fill(0) }]);
    for (const [i, points] of batches.entries()) {
      if (i === 2) {
        const badPoints = Array.from({ length: 128 }, (_, j) => ({ id: 900 + j, vector: random(900 + j), ...(j === 127 ? { extra: true } : {}) }));
        const refused = await api('unit', 'upsert', { points: badPoints });
        expect(refused.status, refused.text).toBe(400);
        expect(refused.body.error).toMatch(/unknown body field: points.127.extra/);
      }
      const up = await api('unit', 'upsert', { points });
      expect(up.status, up.text).toBe(200);
      const got = await api('unit', 'query', { vector: points[0]!.vector.map((x) => x || 1), top_k: 600, with_vector: true, with_payload: false });
      const stored = new Map<number, number[]>(got.body.results.map((r: { id: number; vector: number[] }) => [r.id, r.vector]));
      for (const p of points) expect(stored.get(p.id), `point ${p.id}`).toEqual(unit(p.vector));
    }
  });

  it('an upsert body with a bad point is refused whole, with the message of the ordinary path', async () => {
    await readyIndex(d, token, project, { name: 'refused', dimensions: 3 });
    const cases: Array<[unknown, RegExp]> = [
      [{ points: [{ id: 1, vector: [1, 2, 3] }, { id: 2, vector: [1e39, 0, 0] }] }, /invalid point 1: component 0 \(1e\+39\) is outside the float32 range/],
      [{ points: [{ id: 1, vector: [1, 2, 3] }, { id: 2, vector: [1, 2] }] }, /wrong dimensions for point 1: expected 3, got 2/],
      [{ points: [{ id: 1, vector: [1, 2, 3], extra: true }] }, /unknown body field: points.0.extra/],
      [{ points: [{ id: 1, vector: [1, 2, 3] }], more: 1 }, /unknown body field: more/],
    ];
    for (const [body, message] of cases) {
      const r = await api('refused', 'upsert', body);
      expect(r.status, String(message)).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    const bad = await d.api('POST', `${idx(project, 'refused')}:upsert`, { token, raw: '{"points": [', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid JSON/);
    expect((await api('refused', 'scroll', {})).body.points).toEqual([]);
  });
});

describe('a burst of upserts with the builder running', () => {
  let d: TestDaemon;
  let token: string;
  let project: string;
  beforeAll(async () => {
    d = await startVectorDaemon({ exactMaxPoints: 0 });
    token = await d.adminToken();
    project = (d.db.prepare(`SELECT id FROM acct_projects WHERE slug = 'default'`).get() as { id: string }).id;
  });
  afterAll(() => d.close());

  it('every batch is found by the next search during the burst, and the graph takes every point once it ends', { timeout: 60_000 }, async () => {
    const DIMS = 16;
    await readyIndex(d, token, project, { name: 'burst', dimensions: DIMS, distance: 'cosine' });
    const data = clustered(1200, DIMS, 13);
    const api = (verb: string, body: unknown) => d.api('POST', `${idx(project, 'burst')}:${verb}`, { token, body });
    for (let b = 0; b < data.length; b += 100) {
      const up = await api('upsert', { points: data.slice(b, b + 100).map((vector, j) => ({ id: b + j, vector })) });
      expect(up.status, up.text).toBe(200);
      const probe = b + 42;
      expect((await api('query', { vector: data[probe], top_k: 1 })).body.results[0].id).toBe(probe);
    }
    await waitFor(async () => (await d.api('GET', idx(project, 'burst'), { token })).body.index.collection_status === 'green', 30_000);
    // Green: the graph holds every point, so these answers come from it alone.
    for (let id = 0; id < data.length; id += 37) {
      expect((await api('query', { vector: data[id], top_k: 1 })).body.results[0].id).toBe(id);
    }
  });
});

describe('kill -9 while the graph is building (spawned daemon)', () => {
  const run = spawnedHome('platform-vector-ingest-kill-');
  const home = run.home;
  let proc: DaemonProcess | undefined;

  it('every acknowledged point survives, is searchable after the restart, and the graph finishes with exact answers', { timeout: 120_000 }, async () => {
    const DIMS = 64;
    const N = 1500;
    const data = clustered(N, DIMS, 9);
    const live = new Map(data.map((v, id) => [id, v] as const));
    const env = { PLATFORM_VECTOR_READY_DELAY_MS: '0', PLATFORM_VECTOR_EXACT_MAX_POINTS: '0' };
    const call = (p: DaemonProcess, token: string, method: string, path: string, body?: unknown) => apiCall(p.url, method, path, token, body);

    // First life: the builder is held, so nothing of this index is in a graph when the process dies.
    proc = run.proc = await spawnDaemonProcess(home, { ...env, PLATFORM_VECTOR_TEST_PAUSE_GRAPH_BUILD: '1' });
    let token = await loginToken(proc.url);
    const project = (await call(proc, token, 'GET', '/v1/projects')).body.projects.find((p: { slug: string }) => p.slug === 'default').id as string;
    const index = idx(project, 'crash');
    expect((await call(proc, token, 'POST', idx(project), { name: 'crash', dimensions: DIMS })).status).toBe(201);
    await waitFor(async () => (await call(proc!, token, 'GET', index)).body.index.ready === true);
    for (let b = 0; b < N; b += 250) {
      const up = await call(proc, token, 'POST', `${index}:upsert`, { points: data.slice(b, b + 250).map((vector, j) => ({ id: b + j, vector })) });
      expect(up.status).toBe(200);
    }
    expect((await call(proc, token, 'POST', `${index}:query`, { vector: data[N - 1], top_k: 1 })).body.results[0].id).toBe(N - 1);
    expect((await call(proc, token, 'GET', index)).body.index.collection_status).toBe('yellow');
    await killDaemon(proc);

    // Second life: the graph really builds from SQLite; killed again before it is whole.
    proc = run.proc = await spawnDaemonProcess(home, env);
    token = await loginToken(proc.url);
    expect((await call(proc, token, 'GET', index)).body.index.collection_status).toBe('yellow');
    const q = data[123]!;
    expect((await call(proc, token, 'POST', `${index}:query`, { vector: q, top_k: 10 })).body.results.map((r: { id: number }) => r.id)).toEqual(exactTop(live, q, 10));
    await killDaemon(proc);

    // Third life: all acknowledged points are there, found at once, and the graph finishes.
    proc = run.proc = await spawnDaemonProcess(home, env);
    token = await loginToken(proc.url);
    const ids: number[] = [];
    let offset: number | undefined;
    do {
      const s = await call(proc, token, 'POST', `${index}:scroll`, { limit: 1000, ...(offset !== undefined ? { offset } : {}) });
      ids.push(...s.body.points.map((p: { id: number }) => p.id));
      offset = s.body.next_offset;
    } while (offset !== undefined);
    expect(ids).toEqual(Array.from({ length: N }, (_, i) => i));
    await waitFor(async () => (await call(proc!, token, 'GET', index)).body.index.collection_status === 'green', 90_000);
    let hits = 0;
    for (let i = 0; i < N; i += 50) {
      const r = await call(proc, token, 'POST', `${index}:query`, { vector: data[i], top_k: 10 });
      expect(r.body.results[0].id).toBe(i);
      const want = exactTop(live, data[i]!, 10);
      hits += r.body.results.filter((x: { id: number }) => want.includes(x.id)).length;
    }
    expect(hits / ((N / 50) * 10)).toBeGreaterThanOrEqual(0.95);
  });
});

describe('a restart from a save that left points waiting, with a point rewritten after it (spawned daemon)', () => {
  const run = spawnedHome('platform-vector-ingest-resave-');
  const home = run.home;
  let proc: DaemonProcess | undefined;

  it('the rewritten point is its own nearest neighbour once the loaded graph is whole', { timeout: 120_000 }, async () => {
    const env = { PLATFORM_VECTOR_READY_DELAY_MS: '0', PLATFORM_VECTOR_EXACT_MAX_POINTS: '0' };
    const paused = { ...env, PLATFORM_VECTOR_TEST_PAUSE_GRAPH_BUILD: '1' };
    const call = (p: DaemonProcess, token: string, method: string, path: string, body?: unknown) => apiCall(p.url, method, path, token, body);
    const end = async (p: DaemonProcess, signal: NodeJS.Signals) => {
      p.child.kill(signal);
      await p.exited;
    };
    // Points on a line: a point moved far past its end is reachable only through the line's end.
    const points = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, vector: [from + i, (from + i) % 7, 1] }));

    // First life: 1,000 points in the graph, saved whole by the graceful stop.
    proc = run.proc = await spawnDaemonProcess(home, env);
    let token = await loginToken(proc.url);
    const project = (await call(proc, token, 'GET', '/v1/projects')).body.projects.find((p: { slug: string }) => p.slug === 'default').id as string;
    const index = idx(project, 'resave');
    expect((await call(proc, token, 'POST', idx(project), { name: 'resave', dimensions: 3, distance: 'euclid' })).status).toBe(201);
    await waitFor(async () => (await call(proc!, token, 'GET', index)).body.index.ready === true);
    for (let from = 1; from <= 1000; from += 200) expect((await call(proc, token, 'POST', `${index}:upsert`, { points: points(from, 200) })).status).toBe(200);
    await end(proc, 'SIGTERM');

    // Second life, builder held: 200 more points wait beside the graph when the stop saves it, so
    // that save leaves them out (a delete is the change that makes it due).
    proc = run.proc = await spawnDaemonProcess(home, paused);
    token = await loginToken(proc.url);
    expect((await call(proc, token, 'POST', `${index}:upsert`, { points: points(1001, 200) })).status).toBe(200);
    expect((await call(proc, token, 'POST', `${index}:delete-points`, { ids: [1000] })).status).toBe(200);
    await end(proc, 'SIGTERM');
    expect(proc.stderr()).toMatch(/"msg":"vector graph saved".*"points":999/);

    // Third life, builder held: point 5 moves far past the line's end after that save; killed before any other save.
    proc = run.proc = await spawnDaemonProcess(home, paused);
    token = await loginToken(proc.url);
    expect((await call(proc, token, 'POST', `${index}:upsert`, { points: [{ id: 5, vector: [5000, 0, 1] }] })).status).toBe(200);
    expect((await call(proc, token, 'POST', `${index}:query`, { vector: [5000, 0, 1], top_k: 1 })).body.results[0].id).toBe(5);
    await end(proc, 'SIGKILL');

    // Fourth life: the load keeps the saved graph and reinserts the 200 left out plus the rewritten point.
    proc = run.proc = await spawnDaemonProcess(home, env);
    token = await loginToken(proc.url);
    await waitFor(async () => (await call(proc!, token, 'GET', index)).body.index.collection_status === 'green', 60_000);
    expect(proc.stderr()).toMatch(/"msg":"vector graph loaded from its save".*"reinserting":201/);
    const nearest = async (vector: number[]) => (await call(proc!, token, 'POST', `${index}:query`, { vector, top_k: 1 })).body.results[0].id;
    expect(await nearest([5000, 0, 1])).toBe(5);
    expect(await nearest([1200, 3, 1])).toBe(1200);
    expect(await nearest([600, 5, 1])).toBe(600);
  });
});
