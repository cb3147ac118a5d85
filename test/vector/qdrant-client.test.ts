import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { readyIndex, startVectorDaemon } from './helpers.js';

/**
 * The direct-access path driven by the official Qdrant JS client, unchanged: whatever the client
 * needs from Qdrant's wire format (envelopes, status codes, field names) the daemon must speak.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let col: string;
let client: QdrantClient;

/** A client the way a user builds one from the credential response. */
async function clientFor(projectId: string, token: string) {
  const cred = (await d.api('GET', `/v1/projects/${projectId}/vectordb/credentials`, { token })).body;
  const url = new URL(cred.service_url);
  // The JS client ignores a path in `url`; the path goes in `prefix` (the Python client takes it from the url).
  return { cred, client: new QdrantClient({ url: url.origin, prefix: url.pathname, apiKey: cred.token }) };
}

beforeAll(async () => {
  vi.spyOn(console, 'warn').mockImplementation(() => {}); // "Api key is used with unsecure connection": local http is the point
  d = await startVectorDaemon();
  c = await cast(d);
  await readyIndex(d, c.member.token, c.project.id, { name: 'docs', dimensions: 4 });
  const made = await clientFor(c.project.id, c.admin.token);
  client = made.client;
  col = made.cred.collections[0];
});
afterAll(async () => {
  vi.restoreAllMocks();
  await d.close();
});

describe('the official Qdrant client against the direct endpoint', () => {
  it('passes the version check of the client', async () => {
    const warn = vi.mocked(console.warn);
    warn.mockClear();
    const { cred } = await clientFor(c.project.id, c.admin.token);
    const url = new URL(cred.service_url);
    const fresh = new QdrantClient({ url: url.origin, prefix: url.pathname, apiKey: cred.token });
    // The same call the constructor's check makes; by the time ours answers, the check has had its answer too.
    const root = await fresh.api().root({});
    expect(root.data).toMatchObject({ title: expect.any(String), version: expect.stringMatching(/^1\.\d+\.\d+$/) });
    await new Promise((r) => setTimeout(r, 50));
    expect(warn.mock.calls.flat().join('\n')).not.toMatch(/version/i);
  });

  it('lists collections and gets collection info', async () => {
    expect(await client.getCollections()).toEqual({ collections: [{ name: col }] });
    expect((await client.collectionExists(col)).exists).toBe(true);
    const info = await client.getCollection(col);
    expect(info).toMatchObject({ status: 'green', points_count: 0, config: { params: { vectors: { size: 4, distance: 'Cosine' } } } });
  });

  it('upserts, searches and queries with a filter, scrolls and deletes', async () => {
    const up = await client.upsert(col, {
      wait: true,
      points: [
        { id: 1, vector: [1, 0, 0, 0], payload: { kind: 'a', n: 1 } },
        { id: 2, vector: [0.9, 0.1, 0, 0], payload: { kind: 'b', n: 2 } },
        { id: 3, vector: [0, 1, 0, 0], payload: { kind: 'a', n: 3 } },
        { id: '5c56c793-69f3-4fbf-87e6-c4bf54c28c26', vector: [0, 0, 1, 0], payload: { kind: 'b', n: 4 } },
      ],
    });
    expect(up.status).toBe('completed');
    expect((await client.getCollection(col)).points_count).toBe(4);

    const filter = { must: [{ key: 'kind', match: { value: 'a' } }] };
    const hits = await client.search(col, { vector: [1, 0.05, 0, 0], limit: 2, filter, with_payload: true });
    expect(hits.map((h) => h.id)).toEqual([1, 3]);
    expect(hits[0]).toMatchObject({ id: 1, payload: { kind: 'a', n: 1 }, score: expect.any(Number) });

    const q = await client.query(col, { query: [1, 0.05, 0, 0], limit: 2, filter: { must_not: [{ key: 'kind', match: { value: 'a' } }] }, with_payload: true });
    expect(q.points.map((p) => p.id)).toEqual([2, '5c56c793-69f3-4fbf-87e6-c4bf54c28c26']);
    expect(q.points[0].payload).toEqual({ kind: 'b', n: 2 });

    const page1 = await client.scroll(col, { limit: 2, with_payload: true });
    expect(page1.points.map((p) => p.id)).toEqual([1, 2]);
    expect(page1.next_page_offset).toBe(3);
    const page2 = await client.scroll(col, { limit: 2, offset: page1.next_page_offset ?? undefined, with_vector: true, with_payload: false });
    expect(page2.points.map((p) => p.id)).toEqual([3, '5c56c793-69f3-4fbf-87e6-c4bf54c28c26']);
    expect(page2.points[0].vector).toEqual([0, 1, 0, 0]);
    expect(page2.points[0].payload).toBeUndefined();
    expect(page2.next_page_offset ?? null).toBeNull();
    const filtered = await client.scroll(col, { filter: { must: [{ key: 'n', range: { gte: 3 } }] } });
    expect(filtered.points.map((p) => p.id)).toEqual([3, '5c56c793-69f3-4fbf-87e6-c4bf54c28c26']);

    expect((await client.delete(col, { wait: true, points: [1] })).status).toBe('completed');
    expect((await client.delete(col, { wait: true, filter: { must: [{ key: 'kind', match: { value: 'b' } }] } })).status).toBe('completed');
    expect((await client.scroll(col, {})).points.map((p) => p.id)).toEqual([3]);
  });

  it('takes the batch upsert form and a payload key selection', async () => {
    await client.upsert(col, { batch: { ids: [10, 11], vectors: [[0, 0, 0, 1], [0, 0, 1, 1]], payloads: [{ a: 1, b: 2 }, { a: 3, b: 4 }] } });
    const hits = await client.search(col, { vector: [0, 0, 0, 1], limit: 1, with_payload: ['a'] });
    expect(hits).toEqual([{ id: 10, version: 0, score: expect.any(Number), payload: { a: 1 } }]);
    const bare = await client.query(col, { query: { nearest: [0, 0, 0, 1] }, limit: 1 });
    expect(bare.points[0]).toEqual({ id: 10, version: 0, score: expect.any(Number) }); // Qdrant's default: no payload
    await client.delete(col, { points: [10, 11] });
  });

  it('surfaces errors the way the client expects: unknown collection, refused creation, bad token', async () => {
    await expect(client.getCollection(`p_${c.project.short}_nope`)).rejects.toMatchObject({
      status: 403,
      // Our envelope plus Qdrant's status.error, which Qdrant tooling prints.
      data: { error: expect.stringMatching(/does not grant access/), request_id: expect.any(String), status: { error: expect.stringMatching(/does not grant access/) } },
    });
    expect((await client.collectionExists(`p_${c.project.short}_nope`)).exists).toBe(false);
    await expect(client.search(col, { vector: [1, 0, 0] })).rejects.toMatchObject({ status: 400, data: { status: { error: expect.stringMatching(/wrong query width/) } } });
    await expect(client.createCollection(`p_${c.project.short}_new`, { vectors: { size: 4, distance: 'Cosine' } })).rejects.toMatchObject({ status: 403 });
    const forged = new QdrantClient({ url: d.url, prefix: '/vectordb', apiKey: 'not-a-token', checkCompatibility: false });
    await expect(forged.getCollections()).rejects.toMatchObject({ status: 401 });
  });

  it("a credential of one project cannot see or touch another project's collections", async () => {
    const other = await cast(d);
    await readyIndex(d, other.member.token, other.project.id, { name: 'theirs', dimensions: 4 });
    const theirs = await clientFor(other.project.id, other.admin.token);
    const theirCol = theirs.cred.collections[0];
    expect(await theirs.client.getCollections()).toEqual({ collections: [{ name: theirCol }] });
    expect((await client.getCollections()).collections.map((x) => x.name)).not.toContain(theirCol);
    await expect(client.getCollection(theirCol)).rejects.toMatchObject({ status: 403 });
    await expect(client.upsert(theirCol, { points: [{ id: 9, vector: [1, 0, 0, 0] }] })).rejects.toMatchObject({ status: 403 });
    await expect(client.scroll(theirCol, {})).rejects.toMatchObject({ status: 403 });
    await expect(client.search(theirCol, { vector: [1, 0, 0, 0] })).rejects.toMatchObject({ status: 403 });
    expect((await theirs.client.scroll(theirCol, {})).points).toEqual([]);
  });
});
