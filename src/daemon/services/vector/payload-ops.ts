import { badRequest, notFound } from '../../http/errors.js';
import type { AreaContext } from '../../area.js';
import { tx } from '../../store/db.js';
import type { Payload } from './filter.js';
import { idFromKey, parsePointId } from './point-ids.js';
import { checkVector, requestFilter, requireReady } from './points.js';
import type { VectorRuntime } from './runtime.js';
import { storedForm, toBlob } from './scoring.js';
import type { IndexRow } from './store.js';

/** Qdrant's points selector: a list of ids, or a filter. */
export interface Selector {
  points?: unknown[];
  filter?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Stored keys of the selected points; a listed id that is not stored is Qdrant's 404. */
function selectedKeys(rt: VectorRuntime, row: IndexRow, sel: Selector): string[] {
  if ((sel.points === undefined) === (sel.filter === undefined)) throw badRequest('send exactly one of points or filter');
  const engine = rt.engine(row);
  if (sel.filter !== undefined) return engine.matching(requestFilter(sel.filter)!);
  return sel.points!.map((raw, i) => {
    const id = parsePointId(raw);
    if ('error' in id) throw badRequest(`invalid points[${i}]: ${id.error}`);
    if (!engine.has(id.key)) throw notFound(`No point with id ${String(raw)} found`);
    return id.key;
  });
}

/** The object at a dotted `key` inside a payload, created on the way (Qdrant's set_payload `key`). */
function objectAt(payload: Payload, key: string): Payload {
  let cur = payload;
  for (const seg of key.split('.')) {
    if (!seg) throw badRequest(`invalid key "${key}": empty segment`);
    if (!isObject(cur[seg])) cur[seg] = {};
    cur = cur[seg] as Payload;
  }
  return cur;
}

/** Applies `change` to each selected point's payload in one transaction, then to the engine. */
function rewritePayloads(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, sel: Selector, change: (p: Payload) => Payload): void {
  requireReady(row);
  rt.settleWrites();
  const engine = rt.engine(row);
  const keys = selectedKeys(rt, row, sel);
  const next = keys.map((k) => ({ key: k, payload: change(structuredClone(engine.payloadOfKey(k))) }));
  tx(ctx.db, () => rt.store.setPayloads(row.id, next.map((n) => ({ id_key: n.key, payload: JSON.stringify(n.payload) }))));
  for (const n of next) engine.replacePayload(n.key, n.payload);
}

/** set_payload: merges the keys into each payload (at `key` when given); other keys stay. */
export function setPayload(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, sel: Selector, payload: Payload, key?: string | null): void {
  rewritePayloads(ctx, rt, row, sel, (p) => {
    Object.assign(key ? objectAt(p, key) : p, payload);
    return p;
  });
}

/** overwrite_payload: the payload becomes exactly `payload` (or the object at `key` does). */
export function overwritePayload(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, sel: Selector, payload: Payload, key?: string | null): void {
  rewritePayloads(ctx, rt, row, sel, (p) => {
    if (!key) return { ...payload };
    const dot = key.lastIndexOf('.');
    const parent = dot < 0 ? p : objectAt(p, key.slice(0, dot));
    parent[key.slice(dot + 1)] = { ...payload };
    return p;
  });
}

/** delete_payload: removes the keys (dotted paths reach into objects) from each payload. */
export function deletePayloadKeys(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, sel: Selector, keys: string[]): void {
  rewritePayloads(ctx, rt, row, sel, (p) => {
    for (const k of keys) {
      const segs = k.split('.');
      let cur: unknown = p;
      for (const seg of segs.slice(0, -1)) cur = isObject(cur) ? cur[seg] : undefined;
      if (isObject(cur)) delete cur[segs[segs.length - 1]!];
    }
    return p;
  });
}

export function clearPayload(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, sel: Selector): void {
  rewritePayloads(ctx, rt, row, sel, () => ({}));
}

/**
 * update_vectors: new vectors for stored points, payloads kept. All or nothing: every id must be
 * stored (404 otherwise) and every vector the index's width before anything is written.
 */
export function updateVectors(ctx: AreaContext, rt: VectorRuntime, row: IndexRow, points: Array<{ id: unknown; vector: unknown }>): void {
  requireReady(row);
  rt.settleWrites();
  const engine = rt.engine(row);
  const next = points.map((p, i) => {
    const id = parsePointId(p.id);
    if ('error' in id) throw badRequest(`invalid id for point ${i}: ${id.error}`);
    if (!engine.has(id.key)) throw notFound(`No point with id ${String(p.id)} found`);
    if (!Array.isArray(p.vector) || !p.vector.every((x) => typeof x === 'number')) {
      throw badRequest(`point ${i}: vector must be a list of numbers (this store keeps one unnamed vector per point)`);
    }
    checkVector(row, p.vector as number[], `point ${i}`);
    return { key: id.key, vector: storedForm(row.distance, p.vector as number[]), payload: engine.payloadOfKey(id.key) };
  });
  tx(ctx.db, () => rt.store.upsertPoints(row.id, next.map((p) => ({ id_key: p.key, vector: toBlob(p.vector), payload: JSON.stringify(p.payload) }))));
  engine.upsert(next);
}

/** Points by id in the order asked, absent ids left out (Qdrant's retrieve). */
export function retrievePoints(rt: VectorRuntime, row: IndexRow, ids: unknown[], withPayload: boolean, withVector: boolean) {
  requireReady(row);
  const engine = rt.engine(row);
  const out: Array<{ id: number | string; payload?: Payload; vector?: number[] }> = [];
  ids.forEach((raw, i) => {
    const id = parsePointId(raw);
    if ('error' in id) throw badRequest(`invalid ids[${i}]: ${id.error}`);
    if (!engine.has(id.key)) return;
    out.push({
      id: idFromKey(id.key),
      ...(withPayload ? { payload: engine.payloadOfKey(id.key) } : {}),
      ...(withVector ? { vector: Array.from(engine.vectorOf(id.key) ?? []) } : {}),
    });
  });
  return out;
}

/** Exact count of all points or of those a filter accepts. */
export function countPoints(rt: VectorRuntime, row: IndexRow, filter: unknown): number {
  requireReady(row);
  const engine = rt.engine(row);
  const pred = requestFilter(filter);
  return pred ? engine.matching(pred).length : engine.size;
}
