import { randomUUID } from 'node:crypto';
import type { PointId } from '../../../api/vector.js';

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * A point id in its two forms: the value callers see, and a sort key that orders unsigned integers
 * numerically before UUIDs (Qdrant's scroll order). Integers are limited to 2^53-1: JSON numbers
 * beyond that cannot round-trip through JavaScript exactly.
 */
export interface ParsedId {
  id: PointId;
  key: string;
}

export type IdResult = ParsedId | { error: string };

export function parsePointId(raw: unknown): IdResult {
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw) || raw < 0) return { error: 'must be an unsigned integer or a UUID string' };
    if (!Number.isSafeInteger(raw)) return { error: `integer ids must be at most ${Number.MAX_SAFE_INTEGER}` };
    return { id: raw, key: intKey(raw) };
  }
  if (typeof raw === 'string') {
    if (!UUID_RE.test(raw)) return { error: `string id ${JSON.stringify(raw.slice(0, 64))} is not a UUID` };
    const hex = raw.replace(/-/g, '').toLowerCase();
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { id, key: `u${id}` };
  }
  return { error: `invalid id type ${raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw}: must be an unsigned integer or a UUID string` };
}

export const intKey = (n: number) => `n${String(n).padStart(16, '0')}`;

export const generatedId = (): ParsedId => {
  const id = randomUUID();
  return { id, key: `u${id}` };
};

/** The caller-facing id of a stored sort key. */
export const idFromKey = (key: string): PointId => (key[0] === 'n' ? Number(key.slice(1)) : key.slice(1));
