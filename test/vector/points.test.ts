import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { clustered, ref } from './data.js';
import { idx, readyIndex, startVectorDaemon } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startVectorDaemon();
  c = await cast(d);
});
afterAll(() => d.close());

const op = (name: string, verb: string, body: unknown) => d.api('POST', `${idx(c.project.id, name)}:${verb}`, { token: c.member.token, body });
const scrollAll = async (name: string, limit: number) => {
  const ids: Array<number | string> = [];
  let offset: number | string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const r = await op(name, 'scroll', { limit, ...(offset !== undefined ? { offset } : {}) });
    expect(r.status, r.text).toBe(200);
    for (const p of r.body.points) {
      expect(p.vector).toBeUndefined();
      ids.push(p.id);
    }
    offset = r.body.next_offset;
    if (offset === undefined) break;
  }
  return ids;
};

describe('upsert (spec 3 §4.1)', () => {
  beforeAll(() => readyIndex(d, c.member.token, c.project.id, { name: 'up', dimensions: 3 }));

  it('accepts integer and UUID ids, generates UUIDs when omitted, and overwrites on the same id', async () => {
    const uuid = randomUUID().toUpperCase();
    const r = await op('up', 'upsert', {
      points: [
        { id: 7, vector: [1, 0, 0], payload: { tag: 'a', nested: { deep: [1, 2] } } },
        { id: uuid, vector: [0, 1, 0] },
        { vector: [0, 0, 1], payload: { generated: true } },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ index: 'up', upserted_count: 3 });
    const all = await op('up', 'scroll', {});
    expect(all.body.points[0]).toEqual({ id: 7, payload: { tag: 'a', nested: { deep: [1, 2] } } });
    const strings = all.body.points.filter((p: { id: unknown }) => typeof p.id === 'string').map((p: { id: string }) => p.id);
    expect(strings).toContain(uuid.toLowerCase());
    expect(strings).toHaveLength(2);
    for (const s of strings) expect(s).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await op('up', 'upsert', { points: [{ id: 7, vector: [0, 0, 1], payload: { tag: 'b' } }] });
    const q = await op('up', 'query', { vector: [0, 0, 1], top_k: 1, with_vector: true, filter: { must: [{ has_id: [7] }] } });
    expect(q.body.results).toEqual([{ id: 7, score: expect.closeTo(1, 6), payload: { tag: 'b' }, vector: [0, 0, 1] }]);
    // with_payload defaults to true and with_vector to false (spec 3 §4.1).
    const plain = await op('up', 'query', { vector: [0, 0, 1], top_k: 1, filter: { must: [{ has_id: [7] }] } });
    expect(plain.body.results).toEqual([{ id: 7, score: expect.closeTo(1, 6), payload: { tag: 'b' } }]);
  });

  it('points are queryable as soon as upsert returns', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'instant', dimensions: 2 });
    for (let i = 0; i < 20; i++) {
      await op('instant', 'upsert', { points: [{ id: i, vector: [1, i] }] });
      const q = await op('instant', 'query', { vector: [1, i], top_k: 1, filter: { must: [{ has_id: [i] }] } });
      expect(q.body.results.map((r: { id: number }) => r.id)).toEqual([i]);
    }
  });

  it('rejects bad batches with the point index named, writing nothing (all or nothing)', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'atomic', dimensions: 3 });
    const good = (id: number) => ({ id, vector: [1, 2, 3] });
    const cases: Array<[unknown, RegExp]> = [
      [{ points: [] }, /points must not be empty/],
      [{ points: Array.from({ length: 1001 }, (_, i) => good(i)) }, /at most 1000 points/],
      [{ points: [good(1), { id: 2, vector: [1, 2] }] }, /wrong dimensions for point 1: expected 3, got 2/],
      [{ points: [good(1), good(2), { id: true, vector: [1, 2, 3] }] }, /invalid id for point 2: invalid id type boolean/],
      [{ points: [{ id: -1, vector: [1, 2, 3] }] }, /invalid id for point 0: must be an unsigned integer/],
      [{ points: [{ id: 1.5, vector: [1, 2, 3] }] }, /invalid id for point 0/],
      [{ points: [good(1), { id: 'not-a-uuid', vector: [1, 2, 3] }] }, /invalid id for point 1: string id "not-a-uuid" is not a UUID/],
      [{ points: [{ id: 1, vector: [1, 2, 3], payload: [1] }] }, /payload/],
      [{ points: [{ id: 1, vector: [1, 2, 3], extra: 1 }] }, /unknown body field: points.0.extra/],
      [{ points: [{ id: 1, vector: ['a', 2, 3] }] }, /points.0.vector/],
    ];
    for (const [body, message] of cases) {
      const r = await op('atomic', 'upsert', body);
      expect(r.status, String(message)).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    expect((await op('atomic', 'scroll', {})).body.points).toEqual([]);
    const full = await op('atomic', 'upsert', { points: Array.from({ length: 1000 }, (_, i) => good(i)) });
    expect(full.body.upserted_count).toBe(1000);
  });

  it('accepts a body near the 32 MiB cap and refuses one over it with 413 (spec 3 §8)', async () => {
    // 1000 points with 31 KB payloads: about 30 MiB of JSON.
    await readyIndex(d, c.member.token, c.project.id, { name: 'wide', dimensions: 3 });
    const text = 'x'.repeat(31_000);
    const near = { points: Array.from({ length: 1000 }, (_, i) => ({ id: i, vector: [1, i, 0], payload: { text } })) };
    const size = JSON.stringify(near).length;
    expect(size).toBeGreaterThan(29 * 1024 * 1024);
    expect(size).toBeLessThan(32 * 1024 * 1024);
    const ok = await op('wide', 'upsert', near);
    expect(ok.status, ok.text.slice(0, 200)).toBe(200);
    const over = await op('wide', 'upsert', { points: near.points, pad: 'x'.repeat(4 * 1024 * 1024) });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatch(/request body exceeds 33554432 bytes/);
  }, 60_000);
});

describe('query scores against an exact reference (Qdrant conventions)', () => {
  const dims = 8;
  const data = clustered(300, dims, 11);
  const queries = clustered(5, dims, 99);
  for (const distance of ['cosine', 'dot', 'euclid'] as const) {
    for (const quantization of ['none', 'scalar', 'binary'] as const) {
      it(`${distance} with quantization ${quantization}`, async () => {
        const name = `score-${distance}-${quantization}`;
        await readyIndex(d, c.member.token, c.project.id, { name, dimensions: dims, distance, quantization: { kind: quantization } });
        const up = await op(name, 'upsert', { points: data.map((vector, id) => ({ id, vector, payload: { id } })) });
        expect(up.status).toBe(200);
        for (const q of queries) {
          const r = await op(name, 'query', { vector: q, top_k: 10 });
          expect(r.status).toBe(200);
          const expected = data
            .map((v, id) => ({ id, score: ref[distance](v, q) }))
            .sort((a, b) => (distance === 'euclid' ? a.score - b.score : b.score - a.score))
            .slice(0, 10);
          // Every reported score is the exact score of that point (float32 storage: 1e-4 relative).
          for (const res of r.body.results) {
            const exact = ref[distance](data[res.id]!, q);
            expect(Math.abs(res.score - exact)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(exact)));
            expect(res.payload).toEqual({ id: res.id });
          }
          const scores = r.body.results.map((x: { score: number }) => x.score);
          expect(scores).toEqual([...scores].sort((a, b) => (distance === 'euclid' ? a - b : b - a)));
          // Floats and int8 codes find the reference top 10 here; 8 sign bits (binary) only shortlist
          // roughly, so its bound is lower (its recall at realistic widths is in recall.test.ts).
          const got = new Set(r.body.results.map((x: { id: number }) => x.id));
          const overlap = expected.filter((e) => got.has(e.id)).length;
          expect(overlap).toBeGreaterThanOrEqual(quantization === 'binary' ? 7 : 10);
        }
      });
    }
  }

  it('cosine vectors are stored normalized and returned that way; scores are cosine similarity', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'normalized', dimensions: 2 });
    await op('normalized', 'upsert', { points: [{ id: 1, vector: [3, 4] }] });
    const r = await op('normalized', 'query', { vector: [6, 8], with_vector: true, with_payload: false });
    expect(r.body.results[0].score).toBeCloseTo(1, 6);
    expect(r.body.results[0].vector[0]).toBeCloseTo(0.6, 6);
    expect(r.body.results[0].vector[1]).toBeCloseTo(0.8, 6);
    expect(r.body.results[0].payload).toBeUndefined();
  });
});

describe('query options and errors', () => {
  beforeAll(async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'opts', dimensions: 2, distance: 'euclid' });
    await op('opts', 'upsert', { points: Array.from({ length: 30 }, (_, i) => ({ id: i, vector: [i, 0], payload: { i } })) });
  });

  it('top_k defaults to 10; offset skips; euclid distances ascend and score_threshold is a ceiling', async () => {
    const r = await op('opts', 'query', { vector: [0, 0] });
    expect(r.body.results.map((x: { id: number }) => x.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(r.body.results[3].score).toBeCloseTo(3, 6);
    const off = await op('opts', 'query', { vector: [0, 0], top_k: 3, offset: 5 });
    expect(off.body.results.map((x: { id: number }) => x.id)).toEqual([5, 6, 7]);
    const th = await op('opts', 'query', { vector: [0, 0], top_k: 100, score_threshold: 4.5 });
    expect(th.body.results.map((x: { id: number }) => x.id)).toEqual([0, 1, 2, 3, 4]);
    const all = await op('opts', 'query', { vector: [0, 0], top_k: 1000 });
    expect(all.body.results).toHaveLength(30);
  });

  it('a similarity threshold is a floor for cosine and dot', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'floor', dimensions: 2, distance: 'dot' });
    await op('floor', 'upsert', { points: [1, 2, 3, 4].map((i) => ({ id: i, vector: [i, 0] })) });
    const r = await op('floor', 'query', { vector: [1, 0], score_threshold: 2.5 });
    expect(r.body.results.map((x: { id: number }) => x.id)).toEqual([4, 3]);
  });

  it('rejects bad query bodies', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ vector: [0, 0], top_k: 1001 }, /top_k must be at most 1000/],
      [{ vector: [0, 0], offset: -1 }, /offset must not be negative/],
      [{ vector: [0, 0, 0] }, /wrong query width: expected 2 dimensions, got 3/],
      [{ vector: [0, 0], filter: 'city = x' }, /filter must be a JSON object/],
      [{ vector: [0, 0], filter: [1] }, /filter must be a JSON object/],
      [{ vector: [0, 0], filter: { must: [{ key: 'i', match: { value: 'x'.repeat(70_000) } }] } }, /filter too large/],
      [{ vector: [0, 0], filter: { must: [{ key: 'i', match: { value: 1.5 } }] } }, /bad filter at filter.must\[0\].match.value/],
      [{ vector: [0, 0], filter: { must: [{ key: 'i', range: { gt: 'a' } }] } }, /filter.must\[0\].range.gt: must be a number/],
      [{ vector: [0, 0], filter: { should: [{ foo: 1 }] } }, /unknown condition/],
      [{ vector: [0, 0], filter: { any: [] } }, /unknown clause "any"/],
      [{}, /missing required field: vector/],
      [{ vector: [0, 0], top: 3 }, /unknown body field: top/],
    ];
    for (const [body, message] of cases) {
      const r = await op('opts', 'query', body);
      expect(r.status, String(message)).toBe(400);
      expect(r.body.error).toMatch(message);
    }
  });
});

describe('scroll', () => {
  it('covers every point exactly once in id order: integers ascending, then UUIDs', async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'scrolled', dimensions: 2 });
    const ints = Array.from({ length: 230 }, (_, i) => i * 7 + (i % 3));
    const uuids = Array.from({ length: 70 }, () => randomUUID());
    const points = [...ints.map((id) => ({ id, vector: [1, id] })), ...uuids.map((id) => ({ id, vector: [0, 1] }))].sort(() => Math.random() - 0.5);
    for (let i = 0; i < points.length; i += 100) await op('scrolled', 'upsert', { points: points.slice(i, i + 100) });
    for (const limit of [3, 7, 50, 1000]) {
      const ids = await scrollAll('scrolled', limit);
      expect(ids).toEqual([...[...ints].sort((a, b) => a - b), ...uuids.sort()]);
    }
    const first = await op('scrolled', 'scroll', {});
    expect(first.body.points).toHaveLength(50);
    expect(first.body.next_offset).toEqual(expect.any(Number));
  });

  it('rejects a limit over 1000, a bad offset and a filter (not a scroll field in spec 3 §4.1)', async () => {
    expect((await op('scrolled', 'scroll', { limit: 1001 })).body.error).toMatch(/limit must be at most 1000/);
    expect((await op('scrolled', 'scroll', { offset: 'nope' })).body.error).toMatch(/bad offset/);
    expect((await op('scrolled', 'scroll', { offset: -3 })).status).toBe(400);
    const f = await op('scrolled', 'scroll', { filter: { must: [{ has_id: [0, 8] }] } });
    expect(f.status).toBe(400);
    expect(f.body.error).toMatch(/filter/);
  });
});

describe('delete-points', () => {
  beforeAll(async () => {
    await readyIndex(d, c.member.token, c.project.id, { name: 'del', dimensions: 2 });
    await op('del', 'upsert', { points: Array.from({ length: 20 }, (_, i) => ({ id: i, vector: [1, i], payload: { even: i % 2 === 0, i } })) });
  });

  it('deletes by ids (reporting ids_requested) and by filter', async () => {
    const byIds = await op('del', 'delete-points', { ids: [1, 3, 999] });
    expect(byIds.body).toEqual({ index: 'del', status: 'completed', ids_requested: 3 });
    const byFilter = await op('del', 'delete-points', { filter: { must: [{ key: 'even', match: { value: true } }] } });
    expect(byFilter.body).toEqual({ index: 'del', status: 'completed' });
    expect(await scrollAll('del', 100)).toEqual([5, 7, 9, 11, 13, 15, 17, 19]);
    const q = await op('del', 'query', { vector: [1, 0], top_k: 100 });
    expect(q.body.results.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).toEqual([5, 7, 9, 11, 13, 15, 17, 19]);
  });

  it('needs exactly one of ids or filter; refuses an empty filter and more than 1000 ids', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /exactly one of ids or filter$/],
      [{ ids: [1], filter: { must: [{ has_id: [1] }] } }, /not both/],
      [{ filter: {} }, /empty filter refused/],
      [{ filter: { must: [] } }, /empty filter refused/],
      [{ ids: Array.from({ length: 1001 }, (_, i) => i) }, /at most 1000 ids/],
      [{ ids: ['x'] }, /invalid ids\[0\]/],
      [{ ids: [] }, /at least one/],
      [{ filter: 3 }, /filter must be a JSON object/],
    ];
    for (const [body, message] of cases) {
      const r = await op('del', 'delete-points', body);
      expect(r.status, String(message)).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    expect((await scrollAll('del', 100)).length).toBe(8);
  });
});
