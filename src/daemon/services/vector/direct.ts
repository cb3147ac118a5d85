import type { IncomingMessage } from 'node:http';
import { vectordbRoutes as D } from '../../../api/vectordb.js';
import { QueryBody, ScrollBody, UpsertBody, DeletePointsBody } from '../../../api/vector.js';
import type { AreaContext } from '../../area.js';
import { ApiError, forbidden, notFound, unauthorized } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { parseInput } from '../../http/validate.js';
import { findProject } from '../accounts/access.js';
import type { DirectTokens } from './credentials.js';
import { indexView } from './indexes.js';
import { deletePoints, queryPoints, scrollPoints, upsertPoints } from './points.js';
import type { VectorRuntime } from './runtime.js';

const ok = (result: unknown, started: number) => ({ result, status: 'ok' as const, time: (performance.now() - started) / 1000 });

/**
 * Qdrant-compatible routes opened by a direct token: the same engine as the index API, addressed
 * by collection name. The token, not a platform credential, is the boundary (spec 3 §4.1).
 */
export function registerDirect(r: Router, ctx: AreaContext, rt: VectorRuntime, tokens: DirectTokens): void {
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
  const collection = async (req: IncomingMessage, name: string) => {
    const g = await grant(req);
    if (!g.collections.includes(name)) throw forbidden(`this token does not grant access to collection ${name}`);
    const prefix = `p_${g.project.short}_`;
    const row = name.startsWith(prefix) ? rt.store.findIndex(g.project.id, name.slice(prefix.length)) : undefined;
    if (!row) throw notFound(`collection ${name} doesn't exist`);
    return { row: rt.store.indexById(row.id)!, project: g.project };
  };

  r.handle(D.list, async ({ req }) => {
    const t = performance.now();
    const g = await grant(req);
    const existing = new Set(rt.store.indexNames(g.project.id, 100_000).map((n) => `p_${g.project.short}_${n}`));
    return ok({ collections: g.collections.filter((c) => existing.has(c)).map((name) => ({ name })) }, t);
  });
  r.handle(D.info, async ({ req, params }) => {
    const t = performance.now();
    const { row, project } = await collection(req, params.collection);
    const v = indexView(row, project);
    return ok(
      {
        status: v.collection_status ?? 'grey',
        points_count: v.points_count,
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
    upsertPoints(ctx, rt, row, parseInput(UpsertBody, { points: body.points }, 'body'));
    return ok({ operation_id: 0, status: 'completed' }, t);
  });
  r.handle(D.search, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    const { limit, ...rest } = body;
    const q = parseInput(QueryBody, { ...rest, ...(limit !== undefined ? { top_k: limit } : {}) }, 'body');
    return ok(queryPoints(rt, row, q).results.map((p) => ({ ...p, version: 0 })), t);
  });
  r.handle(D.scroll, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    const res = scrollPoints(rt, row, parseInput(ScrollBody, body, 'body'));
    return ok({ points: res.points, next_page_offset: res.next_offset ?? null }, t);
  });
  r.handle(D.delete, async ({ req, params, body }) => {
    const t = performance.now();
    const { row } = await collection(req, params.collection);
    const b = parseInput(DeletePointsBody, { ...(body.points !== undefined ? { ids: body.points } : {}), ...(body.filter !== undefined ? { filter: body.filter } : {}) }, 'body');
    deletePoints(ctx, rt, row, b);
    return ok({ operation_id: 0, status: 'completed' }, t);
  });
  void ApiError;
}
