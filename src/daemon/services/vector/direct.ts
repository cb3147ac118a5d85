import type { vectorContracts } from '../../../api/vector.js';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { badRequest, forbidden, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import type { DirectTokens } from './credentials.js';
import { directScope, ok } from './direct-access.js';
import { registerDirectPoints } from './direct-points.js';
import { registerDirectSearch } from './direct-search.js';
import { dropIndex, indexView } from './indexes.js';
import type { VectorRuntime } from './runtime.js';

/**
 * The Qdrant REST version whose wire format these routes follow. Clients compare it with their own
 * (major equal, minor within one), so it tracks the client the tests drive (@qdrant/js-client-rest).
 */
export const QDRANT_API_VERSION = '1.18.0';

/** Qdrant's payload index types; a create names one, alone or as `{type, ...params}`. */
const PAYLOAD_SCHEMAS = ['keyword', 'integer', 'float', 'geo', 'text', 'bool', 'datetime', 'uuid'];

export function schemaType(raw: unknown): string {
  const type = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? (raw as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !PAYLOAD_SCHEMAS.includes(type)) throw badRequest(`field_schema must be one of ${PAYLOAD_SCHEMAS.join(', ')} (or {type, ...})`);
  return type;
}

/**
 * Qdrant-compatible routes opened by a direct token: the same engine as the index API, addressed
 * by collection name. Collection routes here; points in direct-points.ts, searches in
 * direct-search.ts.
 */
export function registerDirect(router: Router, ctx: AreaContext, rt: VectorRuntime, tokens: DirectTokens, C: ReturnType<typeof vectorContracts>): void {
  const s = directScope(router, ctx, rt, tokens, C);
  const { D } = s;

  s.handle(D.root, () => ({ title: 'platform vectordb (Qdrant-compatible REST subset)', version: QDRANT_API_VERSION }));
  s.handle(D.exists, async ({ req, params }) => {
    const t = performance.now();
    const g = await s.grant(req);
    const prefix = `p_${g.project.short}_`;
    const name = params.collection;
    // A collection outside the token reads as absent, as it would to a Qdrant JWT scoped to other collections.
    const exists = g.collections.includes(name) && name.startsWith(prefix) && rt.store.findIndex(g.project.id, name.slice(prefix.length)) !== undefined;
    return ok({ exists }, t);
  });
  s.handle(D.list, async ({ req }) => {
    const t = performance.now();
    const g = await s.grant(req);
    const existing = new Set(rt.store.indexNames(g.project.id, 100_000).map((n) => `p_${g.project.short}_${n}`));
    return ok({ collections: g.collections.filter((c) => existing.has(c)).map((name) => ({ name })) }, t);
  });
  s.handle(D.info, async ({ req, params }) => {
    const t = performance.now();
    const { row, project } = await s.collection(req, params.collection);
    const v = indexView(row, project, rt);
    const payloadSchema = Object.fromEntries(
      rt.store.payloadIndexes(row.id).map((i) => [i.field_name, { data_type: schemaType(JSON.parse(i.field_schema)), params: {}, points: 0 }]),
    );
    return ok(
      {
        status: v.collection_status ?? 'grey',
        // Live count (Qdrant's is exact after a waited write); the platform API's count lags by design (spec 3 §2.1).
        points_count: v.ready ? rt.engine(row).size : v.points_count,
        config: { params: { vectors: { size: v.dimensions, distance: { cosine: 'Cosine', dot: 'Dot', euclid: 'Euclid' }[v.distance] } } },
        payload_schema: payloadSchema,
      },
      t,
    );
  });
  s.handle(D.create, async ({ req }) => {
    await s.grant(req);
    throw forbidden('direct tokens cannot create collections; create an index through the platform API');
  });
  s.handle(D.drop, async ({ req, params, requestId }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    dropIndex(ctx, rt, row, 'direct access token', requestId);
    return ok(true, t);
  });
  s.handle(D.createPayloadIndex, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    if (!body.field_name) throw badRequest('field_name must not be empty');
    schemaType(body.field_schema);
    rt.store.putPayloadIndex(row.id, body.field_name, JSON.stringify(body.field_schema), isoNow(ctx.clock));
    return ok({ operation_id: 0, status: 'completed' }, t);
  });
  s.handle(D.deletePayloadIndex, async ({ req, params }) => {
    const t = performance.now();
    const { row } = await s.collection(req, params.collection);
    if (!rt.store.deletePayloadIndex(row.id, params.field)) throw notFound(`no payload index on field ${params.field}`);
    return ok({ operation_id: 0, status: 'completed' }, t);
  });

  registerDirectPoints(s);
  registerDirectSearch(s);
}
