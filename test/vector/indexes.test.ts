import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { idx, readyIndex, startVectorDaemon, waitFor } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startVectorDaemon();
  c = await cast(d);
});
afterAll(() => d.close());

const create = (body: Record<string, unknown>, token = c.member.token) => d.api('POST', idx(c.project.id), { token, body });
const expect400 = async (body: Record<string, unknown>, message: RegExp) => {
  const r = await create(body);
  expect(r.status, r.text).toBe(400);
  expect(r.body.error).toMatch(message);
};

describe('index create (spec 3 §4.1)', () => {
  it('creates pending with defaults, then becomes ready with collection_status', async () => {
    const r = await create({ name: 'defaults' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'defaults',
      resource_path: `projects/${c.project.short}/indexes/defaults`,
      collection: `p_${c.project.short}_defaults`,
      dimensions: 768,
      distance: 'cosine',
      on_disk: false,
      payload_on_disk: false,
      quantization: { kind: 'none', always_ram: false },
      shards: 1,
      replicas: 1,
      state: 'pending',
      ready: false,
      points_count: 0,
    });
    expect(r.body.collection_status).toBeUndefined();
    expect(r.body.message).toMatch(/409/);
    await waitFor(async () => (await d.api('GET', idx(c.project.id, 'defaults'), { token: c.member.token })).body.index.ready);
    const g = await d.api('GET', idx(c.project.id, 'defaults'), { token: c.member.token });
    expect(g.status).toBe(200);
    expect(g.body.index).toMatchObject({ state: 'ready', ready: true, collection_status: 'green', segments_count: 1 });
    expect(g.body.index.message).toBeUndefined();
  });

  it('dimensions 0 means the default; every alias of distance and quantization is accepted case-insensitively', async () => {
    expect((await create({ name: 'zero-dims', dimensions: 0 })).body.dimensions).toBe(768);
    const cases: Array<[string, string]> = [
      ['COSINE', 'cosine'],
      ['Dot', 'dot'],
      ['dotproduct', 'dot'],
      ['DOT_PRODUCT', 'dot'],
      ['euclid', 'euclid'],
      ['Euclidean', 'euclid'],
      ['L2', 'euclid'],
    ];
    for (const [i, [given, want]] of cases.entries()) {
      const r = await create({ name: `dist-${i}`, dimensions: 4, distance: given });
      expect(r.status, given).toBe(201);
      expect(r.body.distance).toBe(want);
    }
    for (const [i, [given, want]] of ([['none', 'none'], ['Scalar', 'scalar'], ['INT8', 'scalar'], ['binary', 'binary']] as const).entries()) {
      const r = await create({ name: `q-${i}`, dimensions: 4, quantization: { kind: given } });
      expect(r.status, given).toBe(201);
      expect(r.body.quantization.kind).toBe(want);
    }
    const full = await create({
      name: 'full',
      dimensions: 65536,
      distance: 'dot',
      on_disk: true,
      payload_on_disk: true,
      quantization: { kind: 'int8', quantile: '0.95', always_ram: true },
      shards: 3,
      replicas: 8,
    });
    expect(full.status).toBe(201);
    expect(full.body).toMatchObject({ dimensions: 65536, on_disk: true, payload_on_disk: true, shards: 3, replicas: 8, quantization: { kind: 'scalar', quantile: '0.95', always_ram: true } });
  });

  it('rejects each invalid field with a 400 that says what is wrong', async () => {
    await expect400({ name: 'd1', dimensions: 65537 }, /dimensions must be an integer between 1 and 65536/);
    await expect400({ name: 'd2', dimensions: -1 }, /dimensions must be an integer between 1 and 65536/);
    await expect400({ name: 'd3', dimensions: 1.5 }, /dimensions must be an integer between/);
    await expect400({ name: 'x', distance: 'manhattan' }, /invalid distance "manhattan"/);
    await expect400({ name: 'x', quantization: { kind: 'pq' } }, /invalid quantization.kind "pq"/);
    await expect400({ name: 'x', quantization: { kind: 'scalar', quantile: 'high' } }, /quantization.quantile/);
    await expect400({ name: 'x', quantization: { kind: 'binary', quantile: '0.9' } }, /only to scalar/);
    await expect400({ name: 'Upper' }, /invalid name "Upper"/);
    await expect400({ name: '-lead' }, /invalid name/);
    await expect400({ name: 'trail-' }, /invalid name/);
    await expect400({ name: 'under_score' }, /invalid name/);
    await expect400({ name: 'a'.repeat(49) }, /at most 48 characters/);
    await expect400({ name: 'r', replicas: 9 }, /replicas must be an integer between 1 and 8/);
    await expect400({ name: 'r', replicas: 0 }, /replicas must be an integer between 1 and 8/);
    await expect400({ name: 's', shards: 0 }, /shards must be an integer between/);
    await expect400({ name: 'c', collection: 'p_x_c' }, /unknown body field: collection/);
    await expect400({ name: 'c', colour: 1 }, /unknown body field: colour/);
    await expect400({ dimensions: 4 }, /missing required field: name/);
    expect((await create({ name: 'a'.repeat(48), dimensions: 4 })).status).toBe(201);
  });

  it('a taken name is 409', async () => {
    expect((await create({ name: 'twice', dimensions: 4 })).status).toBe(201);
    const r = await create({ name: 'twice', dimensions: 8 });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/already exists/);
  });
});

describe('list, get, patch, delete', () => {
  it('lists by name with paging bound to the project', async () => {
    for (const n of ['page-a', 'page-b', 'page-c']) await create({ name: n, dimensions: 2 });
    const first = await d.api('GET', `${idx(c.project.id)}?page_size=2`, { token: c.member.token });
    expect(first.status).toBe(200);
    expect(first.body.indexes).toHaveLength(2);
    expect(first.body.next_page_token).toEqual(expect.any(String));
    const names: string[] = [];
    let token: string | undefined;
    do {
      const r = await d.api('GET', `${idx(c.project.id)}?page_size=5${token ? `&page_token=${token}` : ''}`, { token: c.member.token });
      names.push(...r.body.indexes.map((i: { name: string }) => i.name));
      token = r.body.next_page_token;
    } while (token);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['page-a', 'page-b', 'page-c']));
    expect((await d.api('GET', `${idx(c.project.id)}?page_size=201`, { token: c.member.token })).status).toBe(400);
    const other = await cast(d);
    const foreign = await d.api('GET', `${idx(other.project.id)}?page_token=${first.body.next_page_token}`, { token: other.member.token });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatch(/different list/);
  });

  it('get answers the same 404 for missing, malformed and other-project names', async () => {
    const other = await cast(d);
    await create({ name: 'mine', dimensions: 2 });
    const missing = await d.api('GET', idx(c.project.id, 'nope'), { token: c.member.token });
    const malformed = await d.api('GET', idx(c.project.id, 'Bad_Name'), { token: c.member.token });
    const foreign = await d.api('GET', idx(other.project.id, 'mine'), { token: other.member.token });
    for (const r of [missing, malformed, foreign]) expect(r.status).toBe(404);
  });

  it('anything but a UUID as the project is 400 on every route; an unknown UUID is 404 (platform project gate)', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'by-uuid', dimensions: 2 });
    for (const ref of [c.project.short, c.project.slug]) {
      const p = encodeURIComponent(ref);
      for (const [method, path, body] of [
        ['GET', idx(p)],
        ['POST', idx(p), { name: 'x', dimensions: 2 }],
        ['GET', idx(p, 'by-uuid')],
        ['POST', `${idx(p, 'by-uuid')}:query`, { vector: [1, 0] }],
        ['GET', `/v1/projects/${p}/vectordb/credentials`],
      ] as Array<[string, string, unknown?]>) {
        const r = await d.api(method, path, { token: c.admin.token, body });
        expect(r.status, `${method} ${path}`).toBe(400);
        expect(r.body.error).toBe('malformed project id: project id must be a UUID');
      }
    }
    expect((await d.api('GET', idx('not-a-uuid'), { token: c.admin.token })).status).toBe(400);
    expect((await d.api('GET', idx('00000000-0000-4000-8000-000000000000'), { token: c.admin.token })).status).toBe(404);
    // The form is checked before any access: an outsider learns nothing from a slug (400 for all),
    // and with the UUID gets the 404 of the 404-not-403 rule.
    expect((await d.api('GET', idx(c.project.slug), { token: c.outsider.token })).status).toBe(400);
    expect((await d.api('GET', idx(c.project.id), { token: c.outsider.token })).status).toBe(404);
  });

  it('patch edits replicas and payload_on_disk only (admin)', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'editable', dimensions: 2 });
    const path = idx(c.project.id, 'editable');
    const ok = await d.api('PATCH', path, { token: c.admin.token, body: { replicas: 3, payload_on_disk: true } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ replicas: 3, payload_on_disk: true });
    expect((await d.api('GET', path, { token: c.member.token })).body.index).toMatchObject({ replicas: 3, payload_on_disk: true });
    for (const field of ['dimensions', 'distance', 'shards', 'on_disk', 'quantization']) {
      const r = await d.api('PATCH', path, { token: c.admin.token, body: { [field]: field === 'quantization' ? { kind: 'binary' } : 1 } });
      expect(r.status, field).toBe(400);
      expect(r.body.error).toBe(`${field} is immutable; create a new index to change it`);
    }
    const two = await d.api('PATCH', path, { token: c.admin.token, body: { distance: 'dot', shards: 2, replicas: 2 } });
    expect(two.body.error).toMatch(/^distance, shards are immutable/);
    const empty = await d.api('PATCH', path, { token: c.admin.token, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('empty patch: editable fields are replicas, payload_on_disk');
    expect((await d.api('PATCH', path, { token: c.admin.token, body: { replicas: 9 } })).body.error).toMatch(/replicas must be an integer between 1 and 8/);
    expect((await d.api('PATCH', path, { token: c.admin.token, body: { replicas: 0 } })).status).toBe(400);
    expect((await d.api('PATCH', path, { token: c.admin.token, body: { colour: 'red' } })).body.error).toMatch(/unknown body field: colour/);
    expect((await d.api('PATCH', idx(c.project.id, 'missing'), { token: c.admin.token, body: { replicas: 2 } })).status).toBe(404);
  });

  it('delete answers 204 and destroys every vector; the name can be reused empty', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'doomed', dimensions: 2 });
    const up = await d.api('POST', `${idx(c.project.id, 'doomed')}:upsert`, {
      token: c.member.token,
      body: { points: [{ id: 1, vector: [1, 0] }, { id: 2, vector: [0, 1] }] },
    });
    expect(up.status).toBe(200);
    const del = await d.api('DELETE', idx(c.project.id, 'doomed'), { token: c.admin.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await d.api('GET', idx(c.project.id, 'doomed'), { token: c.member.token })).status).toBe(404);
    expect((await d.api('DELETE', idx(c.project.id, 'doomed'), { token: c.admin.token })).status).toBe(404);
    const rows = d.db.prepare(`SELECT COUNT(*) AS n FROM vec_points p LEFT JOIN vec_indexes i ON i.id = p.index_id WHERE i.id IS NULL`).get() as { n: number };
    expect(rows.n).toBe(0);
    await readyIndex(d, c.member.token, c.project.id, { name: 'doomed', dimensions: 2 });
    const scroll = await d.api('POST', `${idx(c.project.id, 'doomed')}:scroll`, { token: c.member.token, body: {} });
    expect(scroll.body.points).toEqual([]);
  });

  it('writes audit rows for create, patch and delete', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'audited', dimensions: 2 });
    await d.api('PATCH', idx(c.project.id, 'audited'), { token: c.admin.token, body: { replicas: 2 } });
    await d.api('DELETE', idx(c.project.id, 'audited'), { token: c.admin.token });
    const actions = (d.db.prepare(`SELECT action FROM acct_audit WHERE project_id = ? AND target = 'audited' ORDER BY ts`).all(c.project.id) as { action: string }[]).map((r) => r.action);
    expect(actions).toEqual(['index.create', 'index.update', 'index.delete']);
  });
});

describe('authorization (spec 3 §5)', () => {
  it('members use list, get, create and data operations; PATCH, DELETE and credentials need admin (403)', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'authz', dimensions: 2 });
    for (const token of [c.member.token, c.sa.token]) {
      expect((await d.api('GET', idx(c.project.id), { token })).status).toBe(200);
      expect((await d.api('GET', idx(c.project.id, 'authz'), { token })).status).toBe(200);
      expect((await d.api('POST', `${idx(c.project.id, 'authz')}:scroll`, { token, body: {} })).status).toBe(200);
      const p = await d.api('PATCH', idx(c.project.id, 'authz'), { token, body: { replicas: 2 } });
      expect(p.status).toBe(403);
      expect(p.body.error).toMatch(/admin role/);
      expect((await d.api('DELETE', idx(c.project.id, 'authz'), { token })).status).toBe(403);
      expect((await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token })).status).toBe(403);
    }
    expect((await create({ name: 'by-sa', dimensions: 2 }, c.sa.token)).status).toBe(201);
    expect((await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token })).status).toBe(200);
  });

  it('outsiders get 404 on every vector route, metadata-only platform admins 403, no credential 401', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'private', dimensions: 2 });
    const routes: Array<[string, string, unknown?]> = [
      ['GET', idx(c.project.id)],
      ['POST', idx(c.project.id), { name: 'sneaky', dimensions: 2 }],
      ['GET', idx(c.project.id, 'private')],
      ['PATCH', idx(c.project.id, 'private'), { replicas: 2 }],
      ['DELETE', idx(c.project.id, 'private')],
      ['POST', `${idx(c.project.id, 'private')}:upsert`, { points: [{ id: 1, vector: [1, 1] }] }],
      ['POST', `${idx(c.project.id, 'private')}:query`, { vector: [1, 1] }],
      ['POST', `${idx(c.project.id, 'private')}:scroll`, {}],
      ['POST', `${idx(c.project.id, 'private')}:delete-points`, { ids: [1] }],
      ['POST', `${idx(c.project.id, 'private')}:bogus`, {}],
      ['POST', idx(c.project.id, 'private'), {}],
      ['GET', `/v1/projects/${c.project.id}/vectordb/credentials`],
    ];
    const missing = await d.api('GET', idx('00000000-0000-4000-8000-000000000000'), { token: c.admin.token });
    for (const [method, path, body] of routes) {
      const r = await d.api(method, path, { token: c.outsider.token, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error, `${method} ${path}`).toBe(missing.body.error);
      // A platform admin holds metadata authority only: the project is visible, its contents are not (403).
      const pa = await d.api(method, path, { token: c.platformAdmin.token, body });
      expect(pa.status, `platform admin ${method} ${path}`).toBe(403);
      expect((await d.api(method, path, { body })).status, `anonymous ${method} ${path}`).toBe(401);
    }
    expect((await d.api('GET', idx(c.project.id, 'private'), { token: c.member.token })).status).toBe(200);
  });
});

describe('custom-method routing', () => {
  it('unknown verb and missing verb are 400; wrong method 405', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'verbs', dimensions: 2 });
    const unknown = await d.api('POST', `${idx(c.project.id, 'verbs')}:search`, { token: c.member.token, body: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/unknown custom method ":search"/);
    const none = await d.api('POST', idx(c.project.id, 'verbs'), { token: c.member.token, body: {} });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatch(/needs a custom method/);
    expect((await d.api('POST', `${idx(c.project.id, 'verbs')}:`, { token: c.member.token, body: {} })).status).toBe(400);
    expect((await d.api('GET', `${idx(c.project.id, 'verbs')}:query`, { token: c.member.token })).status).toBe(405);
    expect((await d.api('PUT', idx(c.project.id, 'verbs'), { token: c.member.token, body: {} })).status).toBe(405);
  });

  it('a data operation on a missing index is 404', async () => {
    const r = await d.api('POST', `${idx(c.project.id, 'ghost')}:query`, { token: c.member.token, body: { vector: [1] } });
    expect(r.status).toBe(404);
  });
});

describe('pending indexes and lagging counts', () => {
  it('all four data operations answer 409 while pending', async () => {
    const slow = await startVectorDaemon({ readyDelayMs: 60_000 });
    try {
      const s = await cast(slow);
      const r = await slow.api('POST', idx(s.project.id), { token: s.member.token, body: { name: 'slow', dimensions: 2 } });
      expect(r.body.state).toBe('pending');
      const base = idx(s.project.id, 'slow');
      const ops: Array<[string, unknown]> = [
        ['upsert', { points: [{ id: 1, vector: [1, 0] }] }],
        ['query', { vector: [1, 0] }],
        ['scroll', {}],
        ['delete-points', { ids: [1] }],
      ];
      for (const [verb, body] of ops) {
        const res = await slow.api('POST', `${base}:${verb}`, { token: s.member.token, body });
        expect(res.status, verb).toBe(409);
        expect(res.body.error).toMatch(/^index not ready: index "slow" is pending; retry when ready is true$/);
      }
      expect((await slow.api('GET', base, { token: s.member.token })).body.index).toMatchObject({ state: 'pending', ready: false });
    } finally {
      await slow.close();
    }
  });

  it('counts lag writes and catch up on the refresh timer', async () => {
    const fast = await startVectorDaemon({ countRefreshMs: 50 });
    const lagging = await startVectorDaemon({ countRefreshMs: 3_600_000 });
    try {
      for (const dd of [fast, lagging]) {
        const s = await cast(dd);
        await readyIndex(dd, s.member.token, s.project.id, { name: 'counted', dimensions: 2 });
        const up = await dd.api('POST', `${idx(s.project.id, 'counted')}:upsert`, {
          token: s.member.token,
          body: { points: [1, 2, 3].map((id) => ({ id, vector: [id, 1] })) },
        });
        expect(up.body.upserted_count).toBe(3);
        const get = () => dd.api('GET', idx(s.project.id, 'counted'), { token: s.member.token });
        if (dd === fast) {
          await waitFor(async () => (await get()).body.index.points_count === 3);
          expect((await get()).body.index).toMatchObject({ points_count: 3, vectors_count: 3, segments_count: 1 });
        } else {
          // Verify writes by querying, not by counting (spec 3 §2.1).
          expect((await get()).body.index.points_count).toBe(0);
          const q = await dd.api('POST', `${idx(s.project.id, 'counted')}:query`, { token: s.member.token, body: { vector: [1, 1] } });
          expect(q.body.results).toHaveLength(3);
        }
      }
    } finally {
      await fast.close();
      await lagging.close();
    }
  });
});
