import { badRequest } from '../../http/errors.js';
import { parseInput } from '../../http/validate.js';
import { type DirectScope, ok, select } from './direct-access.js';
import { queryPoints } from './points.js';
import { recommendPoints, type Example, type RecommendInput, type Strategy } from './recommend.js';
import type { VectorRuntime } from './runtime.js';
import type { IndexRow } from './store.js';

type Selection = { with_payload?: boolean | string[]; with_vector?: boolean };
interface Page extends Selection {
  limit?: number;
  offset?: number | null;
  filter?: unknown;
  score_threshold?: number | null;
}

/** Qdrant's scored point: what we found, trimmed to the selection, with its version. */
const scored = <P extends { payload?: Record<string, unknown>; vector?: number[] }>(p: P, b: Selection) => ({
  ...select(p, b.with_payload ?? false, b.with_vector ?? false),
  version: 0,
});

/** Only the single unnamed vector of the collection exists here; any other source is refused. */
function onlyDefaultVector(b: { using?: unknown; lookup_from?: unknown; prefetch?: unknown }): void {
  if (b.prefetch != null) throw badRequest('prefetch (hybrid and multi-stage queries) is not supported by this endpoint: send one query');
  if (b.using != null && b.using !== '') throw badRequest('using: this store keeps one unnamed vector per point; leave using out');
  if (b.lookup_from != null) throw badRequest('lookup_from is not supported: examples are looked up in this collection');
}

/** A nearest-neighbour search; search and query return no payload and no vector unless asked (Qdrant's defaults). */
function nearest(s: DirectScope, row: IndexRow, vector: number[], b: Page) {
  const q = parseInput(
    s.C.QueryBody,
    {
      vector,
      top_k: b.limit,
      offset: b.offset ?? undefined,
      filter: b.filter,
      score_threshold: b.score_threshold ?? undefined,
      with_payload: b.with_payload !== undefined && b.with_payload !== false,
      with_vector: b.with_vector,
    },
    'body',
  );
  return queryPoints(s.rt, row, q).results.map((p) => scored(p, b));
}

function recommend(rt: VectorRuntime, row: IndexRow, ex: { positive?: Example[]; negative?: Example[]; strategy?: Strategy | null }, b: Page) {
  const input: RecommendInput = {
    positive: ex.positive ?? [],
    negative: ex.negative ?? [],
    strategy: ex.strategy ?? null,
    limit: b.limit,
    offset: b.offset ?? 0,
    filter: b.filter,
    score_threshold: b.score_threshold ?? null,
    with_payload: b.with_payload !== undefined && b.with_payload !== false,
    with_vector: b.with_vector === true,
  };
  return recommendPoints(rt, row, input).map((p) => scored(p, b));
}

/** Search, search batch, recommend and the universal query API. */
export function registerDirectSearch(s: DirectScope): void {
  const { D, rt } = s;

  s.handle(D.search, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    return ok(nearest(s, row, body.vector, body), t);
  });
  s.handle(D.searchBatch, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    return ok(
      body.searches.map((b) => nearest(s, row, b.vector, b)),
      t,
    );
  });
  s.handle(D.recommend, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    onlyDefaultVector(body);
    // The legacy recommend route returns payloads unless told otherwise; query does not.
    return ok(recommend(rt, row, body, { ...body, with_payload: body.with_payload ?? true }), t);
  });
  s.handle(D.query, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    onlyDefaultVector(body);
    const q = body.query;
    if (q == null) throw badRequest('query is required: a vector, a point id, {nearest: ...} or {recommend: ...}');
    if (typeof q === 'object' && !Array.isArray(q) && 'recommend' in q) return ok({ points: recommend(rt, row, q.recommend, body) }, t);
    const target = typeof q === 'object' && !Array.isArray(q) ? q.nearest : q;
    // A point id as the query: nearest to that point's vector, the point itself left out.
    if (!Array.isArray(target)) return ok({ points: recommend(rt, row, { positive: [target] }, body) }, t);
    return ok({ points: nearest(s, row, target, body) }, t);
  });
}
