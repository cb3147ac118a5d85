import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileFilter, FilterError, isEmptyFilter } from '../../src/daemon/services/vector/filter.js';
import { intKey } from '../../src/daemon/services/vector/point-ids.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { idx, readyIndex, startVectorDaemon } from './helpers.js';
import { rng } from './data.js';

/**
 * Reference evaluator: a direct reading of Qdrant's filtering documentation, kept deliberately
 * naive (recursive, no compilation) so it can check the engine's compiled predicates.
 */
type J = any;
function refValues(p: J, key: string, flatten: boolean): J[] {
  let cur: J[] = [p];
  for (const seg of key.split('.')) {
    const arr = seg.endsWith('[]');
    const name = arr ? seg.slice(0, -2) : seg;
    cur = cur.flatMap((o) => {
      if (o === null || typeof o !== 'object' || Array.isArray(o) || !(name in o)) return [];
      const v = o[name];
      return arr ? (Array.isArray(v) ? v : []) : [v];
    });
  }
  return flatten ? cur.flatMap((v) => (Array.isArray(v) ? v : [v])) : cur;
}
function refCond(c: J, p: J, id: number): boolean {
  if (Object.keys(c).length === 0 || 'must' in c || 'should' in c || 'must_not' in c) return refFilter(c, p, id);
  if ('has_id' in c) return c.has_id.includes(id);
  if ('is_empty' in c) return refValues(p, c.is_empty.key, true).filter((v) => v !== null).length === 0;
  if ('is_null' in c) return refValues(p, c.is_null.key, false).some((v) => v === null);
  if ('nested' in c) {
    const els = refValues(p, c.nested.key.replace(/\[\]$/, '') + '[]', false);
    return els.some((el) => el && typeof el === 'object' && !Array.isArray(el) && refFilter(c.nested.filter, el, id));
  }
  const vals = refValues(p, c.key, true);
  if (c.range) {
    const r = c.range;
    return vals.some(
      (v) => typeof v === 'number' && (r.gt == null || v > r.gt) && (r.gte == null || v >= r.gte) && (r.lt == null || v < r.lt) && (r.lte == null || v <= r.lte),
    );
  }
  const m = c.match;
  if ('value' in m) return vals.some((v) => v === m.value);
  if ('any' in m) return vals.some((v) => m.any.includes(v));
  const present = vals.filter((v) => v !== null);
  return present.length === 0 || present.some((v) => !m.except.includes(v));
}
function refFilter(f: J, p: J, id: number): boolean {
  const list = (k: string): J[] | undefined => (f[k] == null ? undefined : Array.isArray(f[k]) ? f[k] : [f[k]]);
  const must = list('must');
  const should = list('should');
  const mustNot = list('must_not');
  return (
    (!must || must.every((c) => refCond(c, p, id))) &&
    (!should || should.length === 0 || should.some((c) => refCond(c, p, id))) &&
    (!mustNot || !mustNot.some((c) => refCond(c, p, id)))
  );
}

// Generators: small value domains so conditions match often and edge cases (null, [], missing) occur.
const scalar = fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('x', 'y', 'z'), fc.boolean());
const leaf = fc.oneof({ weight: 4, arbitrary: scalar }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.array(fc.oneof(scalar, fc.constant(null)), { maxLength: 3 }) }, { weight: 1, arbitrary: fc.double({ min: -5, max: 5, noNaN: true }) });
const payload = fc.record(
  {
    a: leaf,
    b: leaf,
    obj: fc.record({ x: leaf, y: leaf }, { requiredKeys: [] }),
    items: fc.array(fc.record({ v: leaf, w: leaf }, { requiredKeys: [] }), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const key = fc.constantFrom('a', 'b', 'obj.x', 'obj.y', 'items[].v', 'items[].w', 'missing', 'obj.missing');
const matchValue = fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('x', 'y', 'z'), fc.boolean());
const listOf = fc.oneof(fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }), fc.array(fc.constantFrom('x', 'y', 'z'), { maxLength: 3 }));
const bound = fc.option(fc.integer({ min: -2, max: 5 }), { nil: undefined });
const fieldCond = fc.oneof(
  fc.record({ key, match: fc.record({ value: matchValue }) }),
  fc.record({ key, match: fc.record({ any: listOf }) }),
  fc.record({ key, match: fc.record({ except: listOf }) }),
  fc.record({ key, range: fc.record({ gt: bound, gte: bound, lt: bound, lte: bound }).filter((r) => Object.values(r).some((v) => v !== undefined)) }).map((c) => ({
    ...c,
    range: Object.fromEntries(Object.entries(c.range).filter(([, v]) => v !== undefined)),
  })),
  fc.record({ is_empty: fc.record({ key }) }),
  fc.record({ is_null: fc.record({ key }) }),
  fc.record({ has_id: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 6 }) }),
);
const { filter } = fc.letrec((tie) => ({
  cond: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fieldCond, fieldCond, tie('filter'), tie('nested')),
  nested: fc.record({
    nested: fc.record({
      key: fc.constantFrom('items', 'items[]'),
      filter: fc.record({ must: fc.array(fieldCond.filter((c) => !('has_id' in c)), { minLength: 1, maxLength: 2 }).map((cs) => cs.map((c) => ('key' in c ? { ...c, key: String(c.key).replace(/^items\[\]\./, '') } : c))) }),
    }),
  }),
  filter: fc.record(
    { must: fc.array(tie('cond'), { maxLength: 3 }), should: fc.array(tie('cond'), { maxLength: 3 }), must_not: fc.array(tie('cond'), { maxLength: 2 }) },
    { requiredKeys: [] },
  ),
}));

describe('filter compiler against the reference evaluator (property)', () => {
  it('agrees on random filters over random payloads', () => {
    fc.assert(
      fc.property(filter, fc.array(payload, { minLength: 20, maxLength: 20 }), (f, payloads) => {
        const pred = compileFilter(f);
        payloads.forEach((p, id) => expect(pred(p as J, intKey(id)), JSON.stringify({ f, p })).toBe(refFilter(f, p, id)));
      }),
      { numRuns: 400, seed: 20261123 },
    );
  });

  it('follows the documented array semantics', () => {
    const p = { country: { cities: [{ name: 'Tokyo', population: 9.3, sights: ['Tower'] }, { name: 'Osaka', population: 2.7, sights: ['Castle'] }] }, tags: ['a', 'b'], none: null, empty: [] };
    const t = (f: unknown) => compileFilter(f)(p, intKey(1));
    expect(t({ must: [{ key: 'country.cities[].population', range: { gte: 9 } }] })).toBe(true);
    expect(t({ must: [{ key: 'country.cities[].sights', match: { value: 'Castle' } }] })).toBe(true);
    expect(t({ must: [{ key: 'tags', match: { any: ['b', 'q'] } }] })).toBe(true);
    expect(t({ must: [{ key: 'tags', match: { except: ['a'] } }] })).toBe(true);
    expect(t({ must: [{ key: 'tags', match: { except: ['a', 'b'] } }] })).toBe(false);
    expect(t({ must: [{ is_empty: { key: 'none' } }, { is_empty: { key: 'empty' } }, { is_empty: { key: 'absent' } }] })).toBe(true);
    expect(t({ must: [{ is_null: { key: 'none' } }] })).toBe(true);
    expect(t({ must: [{ is_null: { key: 'absent' } }] })).toBe(false);
    expect(t({ must: [{ is_empty: { key: 'tags' } }] })).toBe(false);
    // nested: both conditions on the same element
    expect(t({ must: [{ nested: { key: 'country.cities', filter: { must: [{ key: 'name', match: { value: 'Tokyo' } }, { key: 'population', range: { lt: 5 } }] } } }] })).toBe(false);
    expect(t({ must: [{ key: 'country.cities[].name', match: { value: 'Tokyo' } }, { key: 'country.cities[].population', range: { lt: 5 } }] })).toBe(true);
    expect(t({ should: [] })).toBe(true);
    expect(t({ must: { has_id: [1] } })).toBe(true);
  });

  it('values_count counts the values under a key; min_should needs min_count of its conditions', () => {
    const p = { tags: ['a', 'b', 'c'], one: 'x', none: null, n: 3 };
    const t = (f: unknown) => compileFilter(f)(p, 'n0000000000000001');
    expect(t({ must: [{ key: 'tags', values_count: { gte: 3 } }] })).toBe(true);
    expect(t({ must: [{ key: 'tags', values_count: { gt: 3 } }] })).toBe(false);
    expect(t({ must: [{ key: 'one', values_count: { lte: 1, gte: 1 } }] })).toBe(true);
    expect(t({ must: [{ key: 'absent', values_count: { lt: 1 } }] })).toBe(true);
    expect(t({ must: [{ key: 'none', values_count: { gte: 1 } }] })).toBe(false);
    const conditions = [
      { key: 'one', match: { value: 'x' } },
      { key: 'n', range: { gt: 5 } },
      { key: 'tags', match: { any: ['c'] } },
    ];
    expect(t({ min_should: { conditions, min_count: 2 } })).toBe(true);
    expect(t({ min_should: { conditions, min_count: 3 } })).toBe(false);
    expect(t({ min_should: { conditions, min_count: 0 } })).toBe(true);
    // Beside must: both hold.
    expect(t({ must: [{ key: 'n', range: { lt: 1 } }], min_should: { conditions, min_count: 1 } })).toBe(false);
    // As a condition inside must (a nested filter).
    expect(t({ must: [{ min_should: { conditions, min_count: 2 } }] })).toBe(true);
  });

  it('says what is wrong with a bad filter', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ must: [{ key: 'a' }] }, /filter.must\[0\]: a field condition needs exactly one of match, range or values_count/],
      [{ must: [{ key: 'a', match: { value: 1, any: [1] } }] }, /exactly one of value, any, except or text/],
      [{ must: [{ key: 'a', match: { any: [1, 'x'] } }] }, /must not mix strings and integers/],
      [{ must: [{ key: 'a', match: { value: null } }] }, /use is_null/],
      [{ must: [{ key: 'a', range: {} }] }, /at least one of gt, gte, lt, lte/],
      [{ must: [{ key: 'a', range: { between: 1 } }] }, /unexpected field "between"/],
      [{ must: [{ key: '', match: { value: 1 } }] }, /must not be empty/],
      [{ must: [{ key: 'a[x]', match: { value: 1 } }] }, /invalid key/],
      [{ must: [{ has_id: ['nope'] }] }, /has_id\[0\]: string id "nope" is not a UUID/],
      [{ must: [{ nested: { key: 'items', filter: { must: [{ has_id: [1] }] } } }] }, /has_id is not supported inside a nested filter/],
      [{ must: [{ is_empty: 'a' }] }, /is_empty: must be an object with a string key/],
      [{ must: 'a' }, /a condition must be a JSON object/],
      [{ min_should: {} }, /min_should.conditions: must be a list of conditions/],
      [{ min_should: { conditions: [], min_count: -1 } }, /min_should.min_count: must be a non-negative integer/],
      [{ must: [{ key: 'a', values_count: { gte: 'x' } }] }, /values_count.gte: must be a number/],
      [{ must: [{ key: 'a', match: { value: 1 }, values_count: { gt: 1 } }] }, /exactly one of match, range or values_count/],
      [{ maybe: [] }, /unknown clause "maybe"/],
    ];
    for (const [f, message] of bad) expect(() => compileFilter(f)).toThrow(FilterError), expect(() => compileFilter(f)).toThrow(message);
    expect(isEmptyFilter({})).toBe(true);
    expect(isEmptyFilter({ must: [], should: null })).toBe(true);
    expect(isEmptyFilter({ must: [{ has_id: [] }] })).toBe(false);
  });
});

describe('filters through the API match the reference (query exact and graph, delete)', () => {
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;
  const payloads: J[] = [];
  const n = 400;
  beforeAll(async () => {
    // exactMaxPoints 0 and exactMaxCandidates 40: unselective filters go through the graph.
    d = await startVectorDaemon({ exactMaxPoints: 0, exactMaxCandidates: 40 });
    c = await cast(d);
    await readyIndex(d, c.member.token, c.project.id, { name: 'filtered', dimensions: 4 });
    const samples = fc.sample(payload, { numRuns: n, seed: 7 });
    const r = rng(3);
    const points = samples.map((p, id) => {
      payloads.push(p);
      return { id, vector: [r(), r(), r(), r()], payload: p };
    });
    for (let i = 0; i < n; i += 200) {
      const up = await d.api('POST', `${idx(c.project.id, 'filtered')}:upsert`, { token: c.member.token, body: { points: points.slice(i, i + 200) } });
      expect(up.status, up.text).toBe(200);
    }
  });
  afterAll(() => d.close());
  const op = (verb: string, body: unknown) => d.api('POST', `${idx(c.project.id, 'filtered')}:${verb}`, { token: c.member.token, body });

  it('query returns exactly the matching points', async () => {
    const filters = fc.sample(filter, { numRuns: 40, seed: 11 });
    for (const f of filters) {
      const want = payloads.map((p, id) => (refFilter(f, p, id) ? id : -1)).filter((id) => id >= 0);
      const q = await op('query', { vector: [0.5, 0.5, 0.5, 0.5], filter: f, top_k: 1000, with_payload: false });
      expect(q.status).toBe(200);
      expect(q.body.results.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b), JSON.stringify(f)).toEqual(want);
    }
  });

  it('delete-points by filter removes exactly the matching points', async () => {
    const f = { must: [{ key: 'a', match: { any: [1, 2] } }] };
    const gone = new Set(payloads.map((p, id) => (refFilter(f, p, id) ? id : -1)).filter((id) => id >= 0));
    expect(gone.size).toBeGreaterThan(0);
    expect((await op('delete-points', { filter: f })).status).toBe(200);
    const left = await op('scroll', { limit: 1000 });
    expect(left.body.points.map((p: { id: number }) => p.id)).toEqual(payloads.map((_, id) => id).filter((id) => !gone.has(id)));
  });
});
