import { VECTOR_LIMITS as L } from '../../../api/vector.js';
import { badRequest } from '../../http/errors.js';
import type { Payload } from './filter.js';
import { idFromKey } from './point-ids.js';
import { requestFilter, requireReady } from './points.js';
import type { VectorRuntime } from './runtime.js';
import type { IndexRow } from './store.js';

export interface OrderBy {
  key: string;
  direction?: 'asc' | 'desc' | null;
  start_from?: number | string | null;
}

/** A sortable value: a number, or a date-time text as milliseconds (Qdrant orders numbers and datetimes). */
function orderValue(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/** The first sortable value under a dotted key (an array contributes its first element). */
function valueAt(p: Payload, key: string): number | undefined {
  let cur: unknown = p;
  for (const seg of key.split('.')) cur = typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? (cur as Payload)[seg] : undefined;
  return orderValue(Array.isArray(cur) ? cur[0] : cur);
}

/**
 * Scroll ordered by a payload key (Qdrant's `order_by`): points without a sortable value at the
 * key are left out, ties keep id order, `start_from` is inclusive. Like Qdrant, pages continue by
 * `start_from`, not by offset, so `next_page_offset` is always null.
 */
export function scrollOrdered(rt: VectorRuntime, row: IndexRow, body: { limit?: number; filter?: unknown; order_by: OrderBy }) {
  requireReady(row);
  const limit = body.limit ?? L.scrollDefault;
  if (!Number.isInteger(limit) || limit < 1 || limit > L.scrollMax) throw badRequest(`limit must be between 1 and ${L.scrollMax}`);
  const { key, direction, start_from } = body.order_by;
  if (!key) throw badRequest('order_by.key must not be empty');
  const start = start_from == null ? undefined : orderValue(start_from);
  if (start_from != null && start === undefined) throw badRequest('order_by.start_from must be a number or a date-time');
  const desc = direction === 'desc';
  const pred = requestFilter(body.filter);
  const rows: Array<{ key: string; value: number; payload: Payload }> = [];
  for (const p of rt.store.iterateKeysAndPayloads(row.id)) {
    const payload = JSON.parse(p.payload) as Payload;
    if (pred && !pred(payload, p.id_key)) continue;
    const value = valueAt(payload, key);
    if (value === undefined) continue;
    if (start !== undefined && (desc ? value > start : value < start)) continue;
    rows.push({ key: p.id_key, value, payload });
  }
  // A stable sort over rows read in id order keeps ties in id order.
  rows.sort((a, b) => (desc ? b.value - a.value : a.value - b.value));
  return rows.slice(0, limit).map((r) => ({ id: idFromKey(r.key), payload: r.payload, key: r.key }));
}
