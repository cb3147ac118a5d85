import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { idx, readyIndex, startVectorDaemon } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startVectorDaemon();
  c = await cast(d);
  await readyIndex(d, c.member.token, c.project.id, { name: 'direct', dimensions: 3 });
});
afterAll(() => d.close());

const direct = (method: string, path: string, token: string | undefined, body?: unknown, header: 'api-key' | 'bearer' = 'api-key') =>
  d.api(method, `/vectordb/collections${path}`, { body, headers: token ? (header === 'api-key' ? { 'api-key': token } : { authorization: `Bearer ${token}` }) : {} });

describe('GET vectordb/credentials and the direct endpoint it opens', () => {
  it('mints a token for the listed collections; the store key never appears', async () => {
    const r = await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      service_url: `${d.url}/vectordb`,
      collection_prefix: `p_${c.project.short}_`,
      collections: [`p_${c.project.short}_direct`],
      truncated: false,
      token: expect.stringMatching(/^ey/),
      note: expect.stringMatching(/cannot create collections/),
    });
    expect(r.body.external_service_url).toBeUndefined();
    for (const key of ['signing.key', 'vectordb.key']) {
      expect(r.text).not.toContain(readFileSync(join(d.home, 'keys', key), 'utf8').trim());
    }
    expect(statSync(join(d.home, 'keys', 'vectordb.key')).mode & 0o777).toBe(0o600);
  });

  it('names at most 256 collections and says when it left some out', async () => {
    const crowd = await cast(d);
    for (let i = 0; i < 257; i++) {
      const r = await d.api('POST', idx(crowd.project.id), { token: crowd.member.token, body: { name: `c${String(i).padStart(3, '0')}`, dimensions: 2 } });
      expect(r.status).toBe(201);
    }
    const r = await d.api('GET', `/v1/projects/${crowd.project.id}/vectordb/credentials`, { token: crowd.admin.token });
    expect(r.body.truncated).toBe(true);
    expect(r.body.collections).toHaveLength(256);
    expect(r.body.collections.at(-1)).toBe(`p_${crowd.project.short}_c255`);
  });

  it('the token upserts, searches, scrolls and deletes on its collections, Qdrant style', async () => {
    const { token, collections } = (await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token })).body;
    const col = collections[0];
    const list = await direct('GET', '', token);
    expect(list.body).toMatchObject({ status: 'ok', result: { collections: [{ name: col }] } });
    const info = await direct('GET', `/${col}`, token, undefined, 'bearer');
    expect(info.body.result).toMatchObject({ status: 'green', config: { params: { vectors: { size: 3, distance: 'Cosine' } } } });
    const up = await direct('PUT', `/${col}/points`, token, { points: [{ id: 1, vector: [1, 0, 0], payload: { k: 'a' } }, { id: 2, vector: [0, 1, 0], payload: { k: 'b' } }] });
    expect(up.status, up.text).toBe(200);
    expect(up.body.result.status).toBe('completed');
    const s = await direct('POST', `/${col}/points/search`, token, { vector: [1, 0.1, 0], limit: 1, with_payload: true });
    expect(s.body.result).toEqual([{ id: 1, version: 0, score: expect.any(Number), payload: { k: 'a' } }]);
    // Same data through the platform API.
    const viaApi = await d.api('POST', `${idx(c.project.id, 'direct')}:scroll`, { token: c.member.token, body: {} });
    expect(viaApi.body.points.map((p: { id: number }) => p.id)).toEqual([1, 2]);
    const scroll = await direct('POST', `/${col}/points/scroll`, token, { limit: 1 });
    expect(scroll.body.result).toEqual({ points: [{ id: 1, payload: { k: 'a' } }], next_page_offset: 2 });
    const del = await direct('POST', `/${col}/points/delete`, token, { filter: { must: [{ key: 'k', match: { value: 'a' } }] } });
    expect(del.status).toBe(200);
    expect((await direct('POST', `/${col}/points/scroll`, token, {})).body.result.points.map((p: { id: number }) => p.id)).toEqual([2]);
  });

  it('refuses missing and forged tokens, other collections, collection creation; later indexes need a fresh fetch', async () => {
    const { token } = (await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token })).body;
    expect((await direct('GET', '', undefined)).status).toBe(401);
    expect((await direct('GET', '', token.slice(0, -2) + 'xx')).status).toBe(401);
    expect((await direct('GET', '', c.admin.token)).status).toBe(401);
    expect((await direct('PUT', `/p_${c.project.short}_new`, token, { vectors: { size: 3, distance: 'Cosine' } })).status).toBe(403);
    await readyIndex(d, c.member.token, c.project.id, { name: 'later', dimensions: 3 });
    const later = await direct('POST', `/p_${c.project.short}_later/points/scroll`, token, {});
    expect(later.status).toBe(403);
    const fresh = (await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token })).body;
    expect(fresh.collections).toContain(`p_${c.project.short}_later`);
    expect((await direct('POST', `/p_${c.project.short}_later/points/scroll`, fresh.token, {})).status).toBe(200);
    const other = await cast(d);
    await readyIndex(d, other.member.token, other.project.id, { name: 'theirs', dimensions: 3 });
    expect((await direct('POST', `/p_${other.project.short}_theirs/points/scroll`, token, {})).status).toBe(403);
  });
});
