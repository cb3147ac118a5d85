import { ScrollBody, DeletePointsBody } from '../../../api/vector.js';
import { badRequest, notFound } from '../../http/errors.js';
import { parseInput } from '../../http/validate.js';
import { type DirectScope, ok, select } from './direct-access.js';
import { scrollOrdered } from './order-by.js';
import { clearPayload, countPoints, deletePayloadKeys, overwritePayload, retrievePoints, setPayload, updateVectors } from './payload-ops.js';
import { deletePoints, scrollPoints, upsertPoints } from './points.js';

/** Write answers of Qdrant: the operation is done when the response leaves (every write is waited). */
const completed = { operation_id: 0, status: 'completed' } as const;

/** Qdrant's point routes: upsert, retrieve, count, scroll, delete, payload and vector updates. */
export function registerDirectPoints(s: DirectScope): void {
  const { D, ctx, rt } = s;
  const { UpsertBody } = s.C;

  s.handle(D.upsert, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    if ((body.points === undefined) === (body.batch === undefined)) throw badRequest('send exactly one of points or batch');
    const points =
      body.points ??
      body.batch!.ids.map((id, i) => ({ id, vector: body.batch!.vectors[i], ...(body.batch!.payloads?.[i] != null ? { payload: body.batch!.payloads[i] } : {}) }));
    upsertPoints(ctx, rt, row, parseInput(UpsertBody, { points }, 'body'));
    return ok(completed, t);
  });
  s.handle(D.retrieve, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    // Retrieve returns payloads unless told otherwise (Qdrant's default), vectors only when asked.
    const withPayload = body.with_payload ?? true;
    const points = retrievePoints(rt, row, body.ids, withPayload !== false, body.with_vector === true);
    return ok(points.map((p) => ({ ...select(p, withPayload, body.with_vector ?? false), shard_key: null, order_value: null })), t);
  });
  s.handle(D.point, async ({ req, params }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    // The path carries the id as text: digits are an integer id, anything else a UUID.
    const raw = /^\d+$/.test(params.id) ? Number(params.id) : params.id;
    const [p] = retrievePoints(rt, row, [raw], true, true);
    if (!p) throw notFound(`No point with id ${params.id} found`);
    return ok({ ...p, shard_key: null, order_value: null }, t);
  });
  s.handle(D.count, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    return ok({ count: countPoints(rt, row, body.filter) }, t);
  });
  s.handle(D.scroll, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    const { with_payload, with_vector, filter, order_by, ...rest } = body;
    if (order_by != null) {
      if (rest.offset != null) throw badRequest('offset cannot be used with order_by: continue from the last value with order_by.start_from');
      const points = scrollOrdered(rt, row, { limit: rest.limit, filter, order_by: typeof order_by === 'string' ? { key: order_by } : order_by });
      const engine = with_vector ? rt.engine(row) : undefined;
      const out = points.map(({ key, ...p }) => select({ ...p, ...(engine ? { vector: Array.from(engine.vectorOf(key) ?? []) } : {}) }, with_payload ?? true, with_vector ?? false));
      return ok({ points: out, next_page_offset: null }, t);
    }
    const res = scrollPoints(rt, row, { ...parseInput(ScrollBody, { ...rest, offset: rest.offset ?? undefined }, 'body'), filter }, { withVector: with_vector === true });
    // Scroll returns payloads unless told otherwise (Qdrant's default), search and query do not.
    return ok({ points: res.points.map((p) => select(p, with_payload ?? true, with_vector ?? false)), next_page_offset: res.next_offset ?? null }, t);
  });
  s.handle(D.delete, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    const b = parseInput(DeletePointsBody, { ...(body.points !== undefined ? { ids: body.points } : {}), ...(body.filter !== undefined ? { filter: body.filter } : {}) }, 'body');
    deletePoints(ctx, rt, row, b);
    return ok(completed, t);
  });
  s.handle(D.setPayload, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    setPayload(ctx, rt, row, body, body.payload, body.key);
    return ok(completed, t);
  });
  s.handle(D.overwritePayload, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    overwritePayload(ctx, rt, row, body, body.payload, body.key);
    return ok(completed, t);
  });
  s.handle(D.deletePayload, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    deletePayloadKeys(ctx, rt, row, body, body.keys);
    return ok(completed, t);
  });
  s.handle(D.clearPayload, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    clearPayload(ctx, rt, row, body);
    return ok(completed, t);
  });
  s.handle(D.updateVectors, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    updateVectors(ctx, rt, row, body.points);
    return ok(completed, t);
  });
}
