import type { IncomingMessage } from 'node:http';
import { vectordbContracts } from '../../../api/vectordb.js';
import { ScrollBody, DeletePointsBody, type vectorContracts } from '../../../api/vector.js';
import type { AreaContext } from '../../area.js';
import { ApiError, badRequest, forbidden, notFound, unauthorized } from '../../http/errors.js';
import type { HandlerInput, Router } from '../../http/router.js';
import type { RouteContract } from '../../../api/contract.js';
import { parseInput } from '../../http/validate.js';
import { findProject } from '../accounts/access.js';
import type { DirectTokens } from './credentials.js';
import { indexView } from './indexes.js';
import type { IndexRow } from './store.js';
import { deletePoints, queryPoints, scrollPoints, upsertPoints } from './points.js';
import type { VectorRuntime } from './runtime.js';

const ok = (result: unknown, started: number) => ({ result, status: 'ok' as const, time: (performance.now() - started) / 1000 });

/**
 * The Qdrant REST version whose wire format these routes follow. Clients compare it with their own
 * (major equal, minor within one), so it tracks the client the tests drive (@qdrant/js-client-rest).
 */
export const QDRANT_API_VERSION = '1.18.0';

type Selected = { payload?: Record<string, unknown>; vector?: number[] };
/** Applies Qdrant's with_payload (flag or key list) and with_vector to a point we built with both. */
function select<P extends Selected>(p: P, withPayload: boolean | string[], withVector: boolean): P {
  const { payload, vector, ...rest } = p;
  const out: Selected = { ...rest };
  if (withPayload === true && payload) out.payload = payload;
  else if (Array.isArray(withPayload) && payload) out.payload = Object.fromEntries(Object.entries(payload).filter(([k]) => withPayload.includes(k)));
  if (withVector && vector) out.vector = vector;
  return out as P;
}

/**
 * Qdrant-compatible routes opened by a direct token: the same engine as the index API, addressed
 * by collection name. The token, not a platform credential, is the boundary (spec 3 §4.1).
 */
export function registerDirect(router: Router, ctx: AreaContext, rt: VectorRuntime, tokens: DirectTokens, C: ReturnType<typeof vectorContracts>): void {
  const D = vectordbContracts(ctx.config.vector.limits.bodyBytes);
  const { QueryBody, UpsertBody } = C;
  // Errors keep our envelope and add Qdrant's `status.error`, which Qdrant clients and tools print.
  const r = {
    handle<C extends RouteContract>(contract: C, handler: (input: HandlerInput<C>) => unknown): void {
      router.handle(contract, async (input) => {
        const t = performance.now();
        try {
          return await handler(input);
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          throw new ApiError(e.status, e.message, e.headers, { ...e.extra, status: { error: e.message }, time: (performance.now() - t) / 1000 });
        }
      });
    },
  };
  const grant = async (req: IncomingMessage) => {
    const header = req.headers['api-key'];
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = (Array.isArray(header) ? header[0] : header) ?? bearer;
    if (!token) throw unauthorized('must provide an API key (api-key header) or an Authorization bearer token');
    const g = await tokens.verify(token);
    if (!g) throw unauthorized('invalid API key or token');
    const project = findProject(ctx.db, g.projectId);
    if (!project) throw unauthorized('invalid API key or token');
    return { ...g, project };
  };
  /** Search and query share Qdrant's defaults: no payload, no vector unless asked. */
  const nearest = (
    row: IndexRow,
    vector: number[],
    b: { limit?: number; offset?: number; filter?: unknown; score_threshold?: number; with_payload?: boolean | string[]; with_vector?: boolean },
  ) => {
    const q = parseInput(
      QueryBody,
      { vector, top_k: b.limit, offset: b.offset, filter: b.filter, score_threshold: b.score_threshold, with_payload: b.with_payload !== undefined && b.with_payload !== false, with_vector: b.with_vector },
      'body',
    );
    return queryPoints(rt, row, q).results.map((p) => ({ ...select(p, b.with_payload ?? false, b.with_vector ?? false), version: 0 }));
  };
  const collection = async (req: IncomingMessage, name: string) => {
    const g = await grant(req);
    if (!g.collections.includes(name)) throw forbidden(`this token does not grant access to collection ${name}`);
    const prefix = `p_${g.project.short}_`;
    const row = name.startsWith(prefix) ? rt.store.findIndex(g.project.id, name.slice(prefix.length)) : undefined;
    if (!row) throw notFound(`collection ${name} doesn't exist`);
    return { row: rt.store.indexById(row.id)!, project: g.project };
  };

  r.handle(D.root, () => ({ title: 'platform vectordb (Qdrant-compatible REST subset)', version: QDRANT_API_VERSION }));
  r.handle(D.exists, async ({ req, params }) => {
    const t = performance.now();
    const g = await grant(req);
    const prefix = `p_${g.project.short}_`;
    const name = params.collection;
    // A collection outside the token reads as absent, as it would to a Qdrant JWT scoped to other collections.
    const exists = g.collections.includes(name) && name.startsWith(prefix) && rt.store.findIndex(g.project.id, name.slice(prefix.length)) !== undefined;
    return ok({ exists }, t);
  });
  r.handle(D.list, async ({ req }) => {
    const t = performance.now();
    const g = await grant(req);
    const existing = new Set(rt.store.indexNames(g.project.id, 100_000).map((n) => `p_${g.project.short}_${n}`));
    return ok({ collections: g.collections.filter((c) => existing.has(c)).map((name) => ({ name })) }, t);
  });
  r.handle(D.info, async ({ req, params }) => {
    const t = performance.now();
    const { row, project } = await collection(req, params.collection);
    const v = indexView(row, project, rt);
    return ok(
      {
        status: v.collection_status ?? 'grey',
        // Live count (Qdrant's is exact after a waited write); the platform API's count lags by design (spec 3 §2.1).
        points_count: v.ready ? rt.engine(row).size : v.points_count,
        config: { params: { vectors: { size: v.dimensions, distance: { cosine: 'Cosine', dot: 'Dot', euclid: 'Euclid' }[v.distance] } } },
      },
      t,
    );
  });
  r.handle(D.create, async ({ req }) => {
    await grant(req);
    throw forbidden('direct tokens cannot create collections; create an index through the platform API');
  });
  r.handle(D.upsert, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    if ((body.points === undefined) === (body.batch === undefined)) throw badRequest('send exactly one of points or batch');
    const points =
      body.points ??
      body.batch!.ids.map((id, i) => ({ id, vector: body.batch!.vectors[i], ...(body.batch!.payloads?.[i] != null ? { payload: body.batch!.payloads[i] } : {}) }));
    upsertPoints(ctx, rt, row, parseInput(UpsertBody, { points }, 'body'));
    return ok({ operation_id: 0, status: 'completed' }, t);
  });
  r.handle(D.search, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    return ok(nearest(row, body.vector, body), t);
  });
  r.handle(D.query, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    if (body.prefetch !== undefined || body.using !== undefined) throw badRequest('prefetch and using are not supported by this endpoint: send query as a vector');
    return ok({ points: nearest(row, Array.isArray(body.query) ? body.query : body.query.nearest, body) }, t);
  });
  r.handle(D.scroll, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    const { with_payload, with_vector, filter, ...rest } = body;
    const res = scrollPoints(rt, row, { ...parseInput(ScrollBody, rest, 'body'), filter }, { withVector: with_vector === true });
    // Scroll returns payloads unless told otherwise (Qdrant's default), search and query do not.
    return ok({ points: res.points.map((p) => select(p, with_payload ?? true, with_vector ?? false)), next_page_offset: res.next_offset ?? null }, t);
  });
  r.handle(D.delete, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    const b = parseInput(DeletePointsBody, { ...(body.points !== undefined ? { ids: body.points } : {}), ...(body.filter !== undefined ? { filter: body.filter } : {}) }, 'body');
    deletePoints(ctx, rt, row, b);
    return ok({ operation_id: 0, status: 'completed' }, t);
  });
}
