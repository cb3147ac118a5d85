import { parsePointId } from './point-ids.js';

/**
 * The Qdrant filter language (must, should, must_not, min_should; match value/any/except/text,
 * range, values_count, is_empty, is_null, has_id, nested; dotted keys with `[]` array projection), compiled once per
 * request into a predicate over (payload, point sort key). Parsing is strict: anything the engine
 * would not understand is a FilterError whose message names the offending path, which the routes
 * pass through as a 400 (spec 3 §4.1 "storage-side rejection passed through verbatim").
 */
export type Payload = Record<string, unknown>;
export type Predicate = (payload: Payload, idKey: string) => boolean;

export class FilterError extends Error {}

type Scalar = string | number | boolean;
const CLAUSES = ['must', 'should', 'must_not', 'min_should'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (path: string, msg: string): never => {
  throw new FilterError(`bad filter at ${path}: ${msg}`);
};

/** Compiles a filter object; `{}` matches every point. */
export function compileFilter(raw: unknown, path = 'filter', inNested = false): Predicate {
  if (!isObject(raw)) fail(path, 'a filter must be a JSON object');
  const obj = raw as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    if (!(CLAUSES as readonly string[]).includes(k)) fail(path, `unknown clause "${k}" (expected must, should, must_not or min_should)`);
  }
  const list = (k: 'must' | 'should' | 'must_not'): Predicate[] | undefined => {
    const v = obj[k];
    if (v === undefined || v === null) return undefined;
    // Qdrant accepts one condition or a list of them.
    const items = Array.isArray(v) ? v : [v];
    return items.map((c, i) => compileCondition(c, Array.isArray(v) ? `${path}.${k}[${i}]` : `${path}.${k}`, inNested));
  };
  const must = list('must');
  const should = list('should');
  const mustNot = list('must_not');
  const minShould = compileMinShould(obj.min_should, `${path}.min_should`, inNested);
  return (p, id) =>
    (!must || must.every((c) => c(p, id))) &&
    (!should || should.length === 0 || should.some((c) => c(p, id))) &&
    (!mustNot || !mustNot.some((c) => c(p, id))) &&
    (!minShould || minShould(p, id));
}

/** Qdrant's `min_should: {conditions, min_count}`: at least min_count of the conditions hold. */
function compileMinShould(raw: unknown, path: string, inNested: boolean): Predicate | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) return fail(path, 'must be an object with conditions and min_count');
  only(raw, ['conditions', 'min_count'], path);
  if (!Array.isArray(raw.conditions)) return fail(`${path}.conditions`, 'must be a list of conditions');
  const n = raw.min_count;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) return fail(`${path}.min_count`, 'must be a non-negative integer');
  const conditions = raw.conditions.map((c, i) => compileCondition(c, `${path}.conditions[${i}]`, inNested));
  return (p, id) => {
    let held = 0;
    for (const c of conditions) if (c(p, id) && ++held >= n) return true;
    return held >= n;
  };
}

/** True when the filter has no condition at all (delete-points refuses it). */
export function isEmptyFilter(raw: unknown): boolean {
  if (!isObject(raw)) return false;
  return CLAUSES.every((k) => {
    const v = raw[k];
    return v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (k === 'min_should' && isObject(v) && Array.isArray(v.conditions) && v.conditions.length === 0);
  });
}

function compileCondition(raw: unknown, path: string, inNested: boolean): Predicate {
  if (!isObject(raw)) return fail(path, 'a condition must be a JSON object');
  // `{}` is an empty nested filter (matches everything), as Qdrant parses it.
  if (Object.keys(raw).length === 0 || CLAUSES.some((k) => k in raw)) return compileFilter(raw, path, inNested);
  if ('has_id' in raw) {
    only(raw, ['has_id'], path);
    if (inNested) fail(path, 'has_id is not supported inside a nested filter; place it in an adjacent must clause');
    if (!Array.isArray(raw.has_id)) fail(`${path}.has_id`, 'must be a list of point ids');
    const keys = new Set(
      (raw.has_id as unknown[]).map((id, i) => {
        const r = parsePointId(id);
        if ('error' in r) return fail(`${path}.has_id[${i}]`, r.error);
        return r.key;
      }),
    );
    return (_p, id) => keys.has(id);
  }
  if ('is_empty' in raw || 'is_null' in raw) {
    const kind = 'is_empty' in raw ? 'is_empty' : 'is_null';
    only(raw, [kind], path);
    const field = raw[kind];
    if (!isObject(field) || typeof field.key !== 'string') return fail(`${path}.${kind}`, 'must be an object with a string key');
    only(field, ['key'], `${path}.${kind}`);
    const get = compileKey(field.key, `${path}.${kind}.key`);
    if (kind === 'is_null') return (p) => get(p, false).some((v) => v === null);
    return (p) => get(p, true).every((v) => v === null);
  }
  if ('nested' in raw) {
    only(raw, ['nested'], path);
    const n = raw.nested;
    if (!isObject(n) || typeof n.key !== 'string') return fail(`${path}.nested`, 'must be an object with a string key and a filter');
    only(n, ['key', 'filter'], `${path}.nested`);
    const get = compileKey(n.key.endsWith('[]') ? n.key : `${n.key}[]`, `${path}.nested.key`);
    const inner = compileFilter(n.filter, `${path}.nested.filter`, true);
    return (p, id) => get(p, false).some((el) => isObject(el) && inner(el, id));
  }
  if ('key' in raw) return compileField(raw, path);
  return fail(path, `unknown condition with fields ${Object.keys(raw).join(', ') || '(none)'}: expected key with match or range, is_empty, is_null, has_id, nested, or a nested filter`);
}

function only(obj: Record<string, unknown>, allowed: string[], path: string): void {
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) fail(path, `unexpected field "${k}"`);
}

function compileField(raw: Record<string, unknown>, path: string): Predicate {
  only(raw, ['key', 'match', 'range', 'values_count'], path);
  if (typeof raw.key !== 'string') return fail(`${path}.key`, 'must be a string');
  const get = compileKey(raw.key, `${path}.key`);
  const given = (['match', 'range', 'values_count'] as const).filter((k) => raw[k] !== undefined);
  if (given.length !== 1) return fail(path, 'a field condition needs exactly one of match, range or values_count');
  if (given[0] === 'values_count') {
    // Qdrant counts the values stored under the key: an array's elements, one for a single value.
    const test = compileRange(raw.values_count, `${path}.values_count`);
    return (p) => test(get(p, true).filter((v) => v !== null).length);
  }
  if (given[0] === 'range') {
    const test = compileRange(raw.range, `${path}.range`);
    return (p) => get(p, true).some((v) => typeof v === 'number' && test(v));
  }
  const m = raw.match;
  if (!isObject(m)) return fail(`${path}.match`, 'must be an object with value, any, except or text');
  const kinds = Object.keys(m);
  if (kinds.length !== 1 || !['value', 'any', 'except', 'text'].includes(kinds[0]!)) {
    return fail(`${path}.match`, 'must have exactly one of value, any, except or text');
  }
  const mp = `${path}.match.${kinds[0]}`;
  if ('value' in m) {
    const want = scalar(m.value, mp);
    return (p) => get(p, true).some((v) => v === want);
  }
  if ('text' in m) {
    if (typeof m.text !== 'string') return fail(mp, 'must be a string');
    const needle = m.text;
    return (p) => get(p, true).some((v) => typeof v === 'string' && v.includes(needle));
  }
  const listRaw = 'any' in m ? m.any : m.except;
  if (!Array.isArray(listRaw)) return fail(mp, 'must be a list of strings or a list of integers');
  const set = new Set(listRaw.map((v, i) => scalar(v, `${mp}[${i}]`, false)));
  const types = new Set([...set].map((v) => typeof v));
  if (types.size > 1) fail(mp, 'must not mix strings and integers');
  if ('any' in m) return (p) => get(p, true).some((v) => set.has(v as Scalar));
  // except (NOT IN): a point whose field is absent or empty holds no value from the list.
  return (p) => {
    const vals = get(p, true).filter((v) => v !== null);
    return vals.length === 0 || vals.some((v) => !set.has(v as Scalar));
  };
}

function scalar(v: unknown, path: string, allowBool = true): Scalar {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return fail(path, 'match works on strings, integers and booleans; use range for fractional numbers');
    return v;
  }
  if (typeof v === 'boolean' && allowBool) return v;
  if (v === null) return fail(path, 'null cannot be matched; use is_null');
  return fail(path, allowBool ? 'must be a string, an integer or a boolean' : 'must be a string or an integer');
}

function compileRange(raw: unknown, path: string): (v: number) => boolean {
  if (!isObject(raw)) return fail(path, 'must be an object with gt, gte, lt or lte');
  only(raw, ['gt', 'gte', 'lt', 'lte'], path);
  const b: Partial<Record<'gt' | 'gte' | 'lt' | 'lte', number>> = {};
  for (const k of ['gt', 'gte', 'lt', 'lte'] as const) {
    const v = raw[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number') fail(`${path}.${k}`, 'must be a number');
    b[k] = v as number;
  }
  if (Object.keys(b).length === 0) fail(path, 'needs at least one of gt, gte, lt, lte');
  return (v) =>
    (b.gt === undefined || v > b.gt) &&
    (b.gte === undefined || v >= b.gte) &&
    (b.lt === undefined || v < b.lt) &&
    (b.lte === undefined || v <= b.lte);
}

/**
 * Compiles a payload key: `a.b` walks objects, `a[].b` walks every element of the array at `a`.
 * The getter returns the values found; with `flattenLeaf`, an array at the leaf contributes its
 * elements (Qdrant: "if several values are stored, at least one of them should match").
 */
function compileKey(key: string, path: string): (p: Payload, flattenLeaf: boolean) => unknown[] {
  if (key === '') return fail(path, 'must not be empty');
  const segs = key.split('.').map((s) => {
    const array = s.endsWith('[]');
    const name = array ? s.slice(0, -2) : s;
    if (name === '' || /[[\]]/.test(name)) fail(path, `invalid key "${key}": segments are names, optionally followed by []`);
    return { name, array };
  });
  return (p, flattenLeaf) => {
    let cur: unknown[] = [p];
    for (const s of segs) {
      const next: unknown[] = [];
      for (const c of cur) {
        if (!isObject(c) || !(s.name in c)) continue;
        const v = c[s.name];
        if (s.array) {
          if (Array.isArray(v)) next.push(...v);
        } else next.push(v);
      }
      cur = next;
    }
    if (!flattenLeaf) return cur;
    const out: unknown[] = [];
    for (const v of cur) if (Array.isArray(v)) out.push(...v);
    else out.push(v);
    return out;
  };
}
