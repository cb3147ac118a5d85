import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { idx, readyIndex, startVectorDaemon } from './helpers.js';

/**
 * Issue 16 §5: the rest of what Qdrant users do daily, each through the official JS client
 * unchanged: count, retrieve, search batch, recommend, query by id and recommend, payload
 * set/overwrite/delete/clear, vector updates, scroll order_by, values_count and min_should,
 * payload indexes, collection delete, and the prefix-less listener (PLATFORM_QDRANT_PORT).
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let col: string;
let client: QdrantClient;
let token: string;

const UUID = '5c56c793-69f3-4fbf-87e6-c4bf54c28c26';
const points = [
  { id: 1, vector: [1, 0, 0, 0], payload: { kind: 'a', n: 1, tags: ['x', 'y'], at: '2026-01-03T00:00:00Z' } },
  { id: 2, vector: [0.9, 0.1, 0, 0], payload: { kind: 'b', n: 5, tags: ['x'], at: '2026-01-01T00:00:00Z' } },
  { id: 3, vector: [0, 1, 0, 0], payload: { kind: 'a', n: 3, tags: [] } },
  { id: 4, vector: [0, 0, 1, 0], payload: { kind: 'b', n: 2 } },
  { id: UUID, vector: [0.7, 0.7, 0, 0], payload: { kind: 'c', n: 4, tags: ['x', 'y', 'z'], at: '2026-01-02T00:00:00Z' } },
];

beforeAll(async () => {
  vi.spyOn(console, 'warn').mockImplementation(() => {}); // "Api key is used with unsecure connection": local http is the point
  d = await startVectorDaemon({ qdrantPort: 0 });
  c = await cast(d);
  await readyIndex(d, c.member.token, c.project.id, { name: 'ops', dimensions: 4 });
  await readyIndex(d, c.member.token, c.project.id, { name: 'doomed', dimensions: 4 });
  const cred = (await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token })).body;
  token = cred.token;
  const url = new URL(cred.service_url);
  client = new QdrantClient({ url: url.origin, prefix: url.pathname, apiKey: token });
  col = `p_${c.project.short}_ops`;
  await client.upsert(col, { wait: true, points });
});
afterAll(async () => {
  vi.restoreAllMocks();
  await d.close();
});

const ids = (xs: Array<{ id: number | string }>) => xs.map((x) => x.id);

describe('reading', () => {
  it('count: all, by filter, by values_count and min_should', async () => {
    expect(await client.count(col, {})).toEqual({ count: 5 });
    expect(await client.count(col, { filter: { must: [{ key: 'kind', match: { value: 'a' } }] } })).toEqual({ count: 2 });
    expect((await client.count(col, { filter: { must: [{ key: 'tags', values_count: { gte: 2 } }] } })).count).toBe(2);
    const conditions = [
      { key: 'kind', match: { value: 'a' } },
      { key: 'n', range: { gte: 3 } },
      { key: 'tags', match: { any: ['x'] } },
    ];
    // 1: a, x (2); 2: n 5, x (2); 3: a, n 3 (2); 4: none; UUID: n 4, x (2).
    expect((await client.count(col, { filter: { min_should: { conditions, min_count: 2 } } })).count).toBe(4);
    expect((await client.count(col, { filter: { min_should: { conditions, min_count: 3 } } })).count).toBe(0);
  });

  it('retrieve by ids: in the order asked, absent ids left out, payload by default, vectors when asked', async () => {
    const got = await client.retrieve(col, { ids: [3, 99, 1], with_vector: true });
    expect(ids(got)).toEqual([3, 1]);
    expect(got[1]).toMatchObject({ id: 1, payload: points[0]!.payload, vector: [1, 0, 0, 0] });
    const bare = await client.retrieve(col, { ids: [UUID], with_payload: false });
    expect(bare).toEqual([expect.objectContaining({ id: UUID })]);
    expect(bare[0]!.payload ?? undefined).toBeUndefined();
  });

  it('search batch answers each search in order', async () => {
    const [near1, near3] = await client.searchBatch(col, {
      searches: [
        { vector: [1, 0, 0, 0], limit: 2 },
        { vector: [0, 1, 0, 0], limit: 1, filter: { must: [{ key: 'kind', match: { value: 'a' } }] }, with_payload: true },
      ],
    });
    expect(ids(near1!)).toEqual([1, 2]);
    expect(near3).toEqual([{ id: 3, version: 0, score: expect.any(Number), payload: points[2]!.payload }]);
  });

  it('recommend: average_vector by default, the example ids never come back; best_score and sum_scores too', async () => {
    const rec = await client.recommend(col, { positive: [1], negative: [3], limit: 2 });
    expect(ids(rec)).toEqual([2, UUID]);
    expect(rec[0]!.payload).toEqual(points[1]!.payload); // the recommend route returns payloads by default
    const withVector = await client.recommend(col, { positive: [[0, 0, 1, 0]], limit: 1, with_payload: false });
    expect(ids(withVector)).toEqual([4]);
    const best = await client.recommend(col, { positive: [1], negative: [4], strategy: 'best_score', limit: 3 });
    expect(ids(best)).toEqual([2, UUID, 3]);
    const sum = await client.recommend(col, { positive: [1, 3], strategy: 'sum_scores', limit: 1 });
    expect(ids(sum)).toEqual([UUID]);
    await expect(client.recommend(col, { positive: [404], limit: 1 })).rejects.toMatchObject({ status: 404 });
    for (const bad of [[1e39, 0, 0, 0], [1e30, 1e30, 0, 0]]) {
      await expect(client.recommend(col, { positive: [bad], limit: 1 })).rejects.toMatchObject({ status: 400 });
      await expect(client.recommend(col, { positive: [1], negative: [bad], strategy: 'best_score', limit: 1 })).rejects.toMatchObject({ status: 400 });
    }
  });

  it('query: by point id, {nearest}, {recommend}; prefetch is refused with a reason', async () => {
    expect(ids((await client.query(col, { query: 1, limit: 2 })).points)).toEqual([2, UUID]);
    expect(ids((await client.query(col, { query: { nearest: [0, 1, 0, 0] }, limit: 1 })).points)).toEqual([3]);
    expect(ids((await client.query(col, { query: { nearest: UUID }, limit: 1 })).points)).toEqual([2]);
    const rec = await client.query(col, { query: { recommend: { positive: [1], negative: [3] } }, limit: 2, with_payload: true });
    expect(ids(rec.points)).toEqual([2, UUID]);
    expect(rec.points[0]!.payload).toEqual(points[1]!.payload);
    await expect(client.query(col, { prefetch: [{ query: [1, 0, 0, 0] }], query: { fusion: 'rrf' } as never })).rejects.toMatchObject({ status: 400 });
  });

  it('scroll order_by a payload key, both directions, from a start value; offset with order_by is refused', async () => {
    const asc = await client.scroll(col, { order_by: 'n', with_payload: false });
    expect(ids(asc.points)).toEqual([1, 4, 3, UUID, 2]);
    expect(asc.next_page_offset ?? null).toBeNull();
    const desc = await client.scroll(col, { order_by: { key: 'n', direction: 'desc', start_from: 4 }, limit: 2 });
    expect(ids(desc.points)).toEqual([UUID, 3]);
    const byDate = await client.scroll(col, { order_by: { key: 'at' }, filter: { must: [{ key: 'tags', match: { value: 'x' } }] } });
    expect(ids(byDate.points)).toEqual([2, UUID, 1]);
    await expect(client.scroll(col, { order_by: 'n', offset: 2 })).rejects.toMatchObject({ status: 400 });
  });
});

describe('writing', () => {
  it('set, overwrite, delete and clear payload by ids and by filter; filters see the change at once', async () => {
    expect((await client.setPayload(col, { payload: { color: 'red' }, points: [1, 2] })).status).toBe('completed');
    expect((await client.count(col, { filter: { must: [{ key: 'color', match: { value: 'red' } }] } })).count).toBe(2);
    await client.setPayload(col, { payload: { inner: 1 }, points: [1], key: 'meta' });
    await client.setPayload(col, { payload: { seen: true }, filter: { must: [{ key: 'kind', match: { value: 'a' } }] } });
    let [p1] = await client.retrieve(col, { ids: [1] });
    expect(p1!.payload).toEqual({ ...points[0]!.payload, color: 'red', meta: { inner: 1 }, seen: true });
    expect((await client.retrieve(col, { ids: [3] }))[0]!.payload).toMatchObject({ seen: true });

    await client.overwritePayload(col, { payload: { only: 'this' }, points: [2] });
    expect((await client.retrieve(col, { ids: [2] }))[0]!.payload).toEqual({ only: 'this' });

    await client.deletePayload(col, { keys: ['n', 'meta.inner'], points: [1] });
    [p1] = await client.retrieve(col, { ids: [1] });
    expect(p1!.payload).not.toHaveProperty('n');
    expect(p1!.payload).toMatchObject({ meta: {}, color: 'red' });

    await client.clearPayload(col, { points: [4] });
    expect((await client.retrieve(col, { ids: [4] }))[0]!.payload).toEqual({});
    await expect(client.setPayload(col, { payload: { x: 1 }, points: [404] })).rejects.toMatchObject({ status: 404 });
    // The payload changes are stored, not only held in memory.
    const stored = await d.api('POST', `${idx(c.project.id, 'ops')}:scroll`, { token: c.member.token, body: { limit: 10 } });
    expect(stored.body.points.find((p: { id: number }) => p.id === 2).payload).toEqual({ only: 'this' });
  });

  it('update vectors keeps the payload and moves the point; an unknown id or a wrong width changes nothing', async () => {
    expect((await client.updateVectors(col, { points: [{ id: 4, vector: [0, 1, 0, 0.01] }] })).status).toBe('completed');
    const hits = await client.search(col, { vector: [0, 1, 0, 0], limit: 2, with_payload: true });
    expect(ids(hits)).toContain(4);
    expect((await client.retrieve(col, { ids: [4], with_vector: true }))[0]!.vector).toEqual([0, expect.closeTo(1, 3), 0, expect.closeTo(0.01, 3)]);
    await expect(client.updateVectors(col, { points: [{ id: 3, vector: [1, 0, 0, 0] }, { id: 404, vector: [1, 0, 0, 0] }] })).rejects.toMatchObject({ status: 404 });
    await expect(client.updateVectors(col, { points: [{ id: 3, vector: [1, 0] }] })).rejects.toMatchObject({ status: 400 });
    // Components past float32, or a norm whose scores would not be finite, are refused like an upsert's.
    await expect(client.updateVectors(col, { points: [{ id: 3, vector: [1e39, 0, 0, 0] }] })).rejects.toMatchObject({ status: 400 });
    await expect(client.updateVectors(col, { points: [{ id: 3, vector: [1e30, 1e30, 0, 0] }] })).rejects.toMatchObject({ status: 400 });
    expect((await client.retrieve(col, { ids: [3], with_vector: true }))[0]!.vector).toEqual([0, 1, 0, 0]);
  });

  it('payload indexes are accepted, recorded in payload_schema and removed', async () => {
    expect((await client.createPayloadIndex(col, { field_name: 'kind', field_schema: 'keyword', wait: true })).status).toBe('completed');
    await client.createPayloadIndex(col, { field_name: 'n', field_schema: { type: 'integer', range: true } as never });
    expect((await client.getCollection(col)).payload_schema).toMatchObject({ kind: { data_type: 'keyword' }, n: { data_type: 'integer' } });
    // The platform API's single GET names them too (the status dashboard's details); its list does not.
    const got = await d.api('GET', idx(c.project.id, 'ops'), { token: c.member.token });
    expect(got.body.index.payload_indexes).toEqual([{ field: 'kind', type: 'keyword' }, { field: 'n', type: 'integer' }]);
    const listed = await d.api('GET', idx(c.project.id), { token: c.member.token });
    expect(listed.body.indexes.find((i: { name: string }) => i.name === 'ops')).not.toHaveProperty('payload_indexes');
    await client.deletePayloadIndex(col, 'kind');
    expect(Object.keys((await client.getCollection(col)).payload_schema ?? {})).toEqual(['n']);
    await expect(client.createPayloadIndex(col, { field_name: 'x', field_schema: 'hologram' as never })).rejects.toMatchObject({ status: 400 });
    await expect(client.deletePayloadIndex(col, 'kind')).rejects.toMatchObject({ status: 404 });
  });

  it('delete collection removes the index and its points, audited', async () => {
    const doomed = `p_${c.project.short}_doomed`;
    await client.upsert(doomed, { wait: true, points: [{ id: 1, vector: [1, 0, 0, 0] }] });
    expect(await client.deleteCollection(doomed)).toBe(true);
    expect((await client.collectionExists(doomed)).exists).toBe(false);
    expect((await d.api('GET', idx(c.project.id, 'doomed'), { token: c.member.token })).status).toBe(404);
    const audit = await d.api('GET', `/v1/projects/${c.project.id}/audit`, { token: c.admin.token });
    expect(JSON.stringify(audit.body)).toMatch(/index\.delete[^}]*doomed|doomed[^}]*index\.delete/);
  });
});

describe('the prefix-less listener (PLATFORM_QDRANT_PORT)', () => {
  it('serves the same routes at the root of its own port to a client given only host and port', async () => {
    const port = d.app.ctx.config.vector.qdrantPort!;
    const plain = new QdrantClient({ host: '127.0.0.1', port, apiKey: token, https: false });
    expect((await plain.getCollections()).collections.map((x) => x.name)).toContain(col);
    expect(await plain.count(col, {})).toEqual({ count: 5 });
    const root = await (await fetch(`http://127.0.0.1:${port}/`)).json();
    expect(root).toMatchObject({ version: expect.stringMatching(/^1\./) });
    // Only the direct routes: the platform API is not reachable through it, and the token still rules.
    expect((await fetch(`http://127.0.0.1:${port}/v1/projects`, { headers: { authorization: `Bearer ${c.admin.token}` } })).status).toBe(404);
    await expect(new QdrantClient({ host: '127.0.0.1', port, apiKey: 'forged', https: false, checkCompatibility: false }).getCollections()).rejects.toMatchObject({ status: 401 });
    const cred = (await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token })).body;
    expect(cred.note).toContain(`http://127.0.0.1:${port}`);
  });
});
