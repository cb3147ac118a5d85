import {
  VECTOR_LIMITS as L,
  type CountBody,
  type Distance,
  type DeletePointsBody,
  type QueryBody,
  type ScoredPoint,
  type ScrollBody,
  type UpsertBody,
} from '../../../api/vector.js';
import type { AreaContext } from '../../area.js';
import { ApiError, badRequest, conflict } from '../../http/errors.js';
import { tx } from '../../store/db.js';
import { compileFilter, FilterError, isEmptyFilter, type Payload, type Predicate } from './filter.js';
import { generatedId, idFromKey, parsePointId, type ParsedId } from './point-ids.js';
import type { VectorRuntime } from './runtime.js';
import { passesThreshold, storedForm, toBlob } from './scoring.js';
import type { IndexRow } from './store.js';
import type { UpsertPoint } from './upsert-parse.js';

/** Data operations answer 409 until the collection exists (spec 3 §3). */
export function requireReady(row: IndexRow): void {
  if (row.state !== 'ready') throw conflict(`index not ready: index "${row.name}" is ${row.state}; retry when ready is true`);
}

/** Checks size and shape, then compiles; the parser's message is the 400 (spec 3 §4.1). */
export function requestFilter(raw: unknown): Predicate | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('filter must be a JSON object');
  const size = Buffer.byteLength(JSON.stringify(raw));
  if (size > L.filterBytes) throw badRequest(`filter too large: ${size} bytes (at most ${L.filterBytes})`);
  try {
    return compileFilter(raw);
  } catch (e) {
    if (e instanceof FilterError) throw badRequest(e.message);
    throw e;
  }
}

/** Largest finite float32: vectors are stored and scored as float32. */
const F32_MAX = 3.4028234663852886e38;
/**
 * Largest squared norm a vector may have: two such vectors keep every float32 score finite
 * (a dot product is at most |a||b|, a squared distance at most (|a|+|b|)^2 = 4 * this).
 */
const MAX_SQUARED_NORM = F32_MAX / 4;

/**
 * Every vector a request hands the engine (stored points, queries, recommend examples, vector
 * updates) goes through this: the index's width, components finite as float32, and a norm small
 * enough that no score overflows. Otherwise a point would score null (NaN) and rank first.
 */
export function checkVector(row: IndexRow, v: ArrayLike<number>, what: string): void {
  if (v.length !== row.dimensions) throw badRequest(`wrong dimensions for ${what}: expected ${row.dimensions}, got ${v.length}`);
  let squared = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!Number.isFinite(x) || Math.abs(x) > F32_MAX) throw badRequest(`invalid ${what}: component ${i} (${x}) is outside the float32 range`);
    squared += x * x;
  }
  if (!(squared <= MAX_SQUARED_NORM)) throw badRequest(`invalid ${what}: its norm is too large for finite float32 scores (at most ${Math.sqrt(MAX_SQUARED_NORM).toExponential(3)})`);
}

/**
 * Writes 1..1000 points all or nothing: everything is validated before the one transaction. The
 * acknowledgement follows the commit (durable, the write-ahead log being SQLite's); the engine then
 * finds the points at once, beside its graph until the background build inserts them.
 */
export function upsertPoints(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, body: UpsertBody | { points: UpsertPoint[] }) {
  const points = checkedPoints(row, body);
  const engine = rt.engine(row);
  rt.settleWrites();
  tx(ctx.db, () =>
    rt.store.upsertPoints(
      row.id,
      points.map((p) => ({ id_key: p.key, vector: toBlob(p.vector), payload: JSON.stringify(p.payload) })),
    ),
  );
  engine.upsert(points);
  return { index: row.name, upserted_count: points.length };
}

/**
 * The same as upsertPoints, the commit made by the point writer's thread (point-writer.ts) while the
 * event loop serves other requests; the points enter the engine once committed, before the answer.
 */
export async function upsertPointsOffThread(rt: VectorRuntime, row: IndexRow, body: UpsertBody | { points: UpsertPoint[] }) {
  const points = checkedPoints(row, body);
  const engine = rt.engine(row);
  const batch = () => {
    const vectors = new Float32Array(points.length * row.dimensions);
    points.forEach((p, i) => vectors.set(p.vector, i * row.dimensions));
    return { indexId: row.id, keys: points.map((p) => p.key), vectors, payloads: points.map((p) => JSON.stringify(p.payload)) };
  };
  await rt.writer.commit(row.id, batch, () => engine.upsert(points));
  return { index: row.name, upserted_count: points.length };
}

/** An upsert's points, checked whole (ids, widths, float32 range) and in stored form, or the 400. */
function checkedPoints(row: IndexRow, body: UpsertBody | { points: UpsertPoint[] }) {
  requireReady(row);
  return body.points.map((p, i) => {
    let id: ParsedId;
    if (p.id === undefined) id = generatedId();
    else {
      const r = parsePointId(p.id);
      if ('error' in r) throw badRequest(`invalid id for point ${i}: ${r.error}`);
      id = r;
    }
    const { checked, storedFor } = p as UpsertPoint;
    if (!checked || p.vector.length !== row.dimensions) checkVector(row, p.vector, `point ${i}`);
    return { key: id.key, vector: inStoredForm(row, p.vector, storedFor), payload: (p.payload ?? {}) as Payload };
  });
}

/**
 * The vector as the engine stores it. The parse worker's rows come normalized for the distance the
 * route looked up before the parse, in memory of their own: they are taken as they are, with no copy
 * (a slice and a normalization per point were a third of the event loop's checks per batch).
 */
function inStoredForm(row: IndexRow, v: ArrayLike<number>, storedFor: Distance | undefined): Float32Array {
  if (storedFor === undefined || !(v instanceof Float32Array)) return storedForm(row.distance, v);
  if (storedFor === row.distance || (storedFor !== 'cosine' && row.distance !== 'cosine')) return v;
  if (storedFor !== 'cosine') return storedForm(row.distance, v);
  // Normalized for a cosine index that was dropped and made again under the same name, with another distance, during the parse.
  throw new ApiError(503, `index "${row.name}" changed while the request was read: retry the request`);
}

export function queryPoints(rt: VectorRuntime, row: IndexRow, body: QueryBody) {
  requireReady(row);
  if (body.vector.length !== row.dimensions) {
    throw badRequest(`wrong query width: expected ${row.dimensions} dimensions, got ${body.vector.length}`);
  }
  checkVector(row, body.vector, 'query vector');
  const pred = requestFilter(body.filter);
  const topK = body.top_k ?? L.topKDefault;
  const offset = body.offset ?? 0;
  const engine = rt.engine(row);
  const q = storedForm(row.distance, body.vector);
  const { results } = engine.search(q, topK + offset, pred);
  const withPayload = body.with_payload ?? true;
  const out: ScoredPoint[] = results
    .slice(offset)
    .filter((r) => passesThreshold(row.distance, r.score, body.score_threshold))
    .map((r) => ({
      id: idFromKey(r.key),
      score: r.score,
      ...(withPayload ? { payload: engine.payloadOfKey(r.key) } : {}),
      ...(body.with_vector ? { vector: Array.from(engine.vectorOf(r.key)!) } : {}),
    }));
  return { index: row.name, results: out };
}

/** Id order, integers before UUIDs; `offset` is the first id of the page (Qdrant's next_page_offset). */
/** Scroll in id order; `filter` comes only from the Qdrant-compatible route (the platform's scroll body has none, spec 3 §4.1). */
export function scrollPoints(rt: VectorRuntime, row: IndexRow, body: ScrollBody & { filter?: unknown }, opts: { withVector?: boolean } = {}) {
  requireReady(row);
  const limit = body.limit ?? L.scrollDefault;
  let from = '';
  if (body.offset !== undefined) {
    const r = parsePointId(body.offset);
    if ('error' in r) throw badRequest(`bad offset: ${r.error}`);
    from = r.key;
  }
  const pred = requestFilter(body.filter);
  const points: Array<{ id: number | string; payload: Payload; vector?: number[] }> = [];
  const engine = opts.withVector ? rt.engine(row) : undefined;
  let next: number | string | undefined;
  for (const p of rt.store.iterateKeysAndPayloads(row.id, from)) {
    const payload = JSON.parse(p.payload) as Payload;
    if (pred && !pred(payload, p.id_key)) continue;
    if (points.length === limit) {
      next = idFromKey(p.id_key);
      break;
    }
    points.push({ id: idFromKey(p.id_key), payload, ...(engine ? { vector: Array.from(engine.vectorOf(p.id_key) ?? []) } : {}) });
  }
  return { index: row.name, points, ...(next !== undefined ? { next_offset: next } : {}) };
}

/**
 * The live point count (an extension: the index view's points_count is refreshed on a timer, spec
 * 3 §2.1). Without a filter it is the engine's size, read in O(1); with one, payloads are scanned.
 */
export function countPoints(rt: VectorRuntime, row: IndexRow, body: CountBody) {
  requireReady(row);
  const pred = requestFilter(body.filter);
  if (!pred) return { index: row.name, count: rt.engine(row).size };
  let count = 0;
  for (const p of rt.store.iterateKeysAndPayloads(row.id, '')) if (pred(JSON.parse(p.payload) as Payload, p.id_key)) count++;
  return { index: row.name, count };
}

export function deletePoints(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, body: DeletePointsBody) {
  requireReady(row);
  // Upserts in flight first: the engine then holds every committed point this delete may match.
  rt.settleWrites();
  const hasIds = body.ids !== undefined;
  const hasFilter = body.filter !== undefined;
  if (hasIds === hasFilter) throw badRequest(`send exactly one of ids or filter${hasIds ? ', not both' : ''}`);
  const engine = rt.engine(row);
  let keys: string[];
  if (hasIds) {
    if (body.ids!.length === 0) throw badRequest('ids must contain at least one point id');
    keys = body.ids!.map((raw, i) => {
      const r = parsePointId(raw);
      if ('error' in r) throw badRequest(`invalid ids[${i}]: ${r.error}`);
      return r.key;
    });
  } else {
    if (isEmptyFilter(body.filter)) throw badRequest('empty filter refused: it would match every point; pass a condition or ids (or delete the index)');
    keys = engine.matching(requestFilter(body.filter)!);
  }
  tx(ctx.db, () => rt.store.deletePoints(row.id, keys));
  engine.delete(keys);
  return { index: row.name, status: 'completed', ...(hasIds ? { ids_requested: keys.length } : {}) };
}
