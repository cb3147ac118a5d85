import type { IncomingMessage } from 'node:http';
import type { RouteContract } from '../../../api/contract.js';
import type { vectorContracts } from '../../../api/vector.js';
import { vectordbContracts } from '../../../api/vectordb.js';
import type { AreaContext } from '../../area.js';
import { ApiError, forbidden, notFound, unauthorized } from '../../http/errors.js';
import type { HandlerInput, Router } from '../../http/router.js';
import { findProject } from '../accounts/access.js';
import type { DirectTokens } from './credentials.js';
import type { VectorRuntime } from './runtime.js';
import type { IndexRow } from './store.js';

/** Qdrant's response envelope: the result, `status: ok` and the time taken in seconds. */
export const ok = (result: unknown, started: number) => ({ result, status: 'ok' as const, time: (performance.now() - started) / 1000 });

type Selected = { payload?: Record<string, unknown>; vector?: number[] };
/** Applies Qdrant's with_payload (flag or key list) and with_vector to a point we built with both. */
export function select<P extends Selected>(p: P, withPayload: boolean | string[], withVector: boolean): P {
  const { payload, vector, ...rest } = p;
  const out: Selected = { ...rest };
  if (withPayload === true && payload) out.payload = payload;
  else if (Array.isArray(withPayload) && payload) out.payload = Object.fromEntries(Object.entries(payload).filter(([k]) => withPayload.includes(k)));
  if (withVector && vector) out.vector = vector;
  return out as P;
}

/** What every direct route works with: the wrapped router, the runtime and the token checks. */
export interface DirectScope {
  ctx: AreaContext;
  rt: VectorRuntime;
  C: ReturnType<typeof vectorContracts>;
  D: ReturnType<typeof vectordbContracts>;
  handle<R extends RouteContract>(contract: R, handler: (input: HandlerInput<R>) => unknown): void;
  grant(req: IncomingMessage): Promise<{ projectId: string; collections: string[]; project: NonNullable<ReturnType<typeof findProject>> }>;
  /** The index a collection name opens for this token: 401 bad token, 403 outside it, 404 absent. */
  collection(req: IncomingMessage, name: string): Promise<{ row: IndexRow; project: NonNullable<ReturnType<typeof findProject>> }>;
}

/**
 * The direct token, not a platform credential, is the boundary of the Qdrant-compatible routes
 * (spec 3 §4.1). Errors keep our envelope and add Qdrant's `status.error`, which Qdrant clients
 * and tools print.
 */
export function directScope(router: Router, ctx: AreaContext, rt: VectorRuntime, tokens: DirectTokens, C: ReturnType<typeof vectorContracts>): DirectScope {
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
  return {
    ctx,
    rt,
    C,
    D: vectordbContracts(ctx.config.vector.limits.bodyBytes),
    handle(contract, handler) {
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
    grant,
    async collection(req, name) {
      const g = await grant(req);
      if (!g.collections.includes(name)) throw forbidden(`this token does not grant access to collection ${name}`);
      const prefix = `p_${g.project.short}_`;
      const row = name.startsWith(prefix) ? rt.store.findIndex(g.project.id, name.slice(prefix.length)) : undefined;
      if (!row) throw notFound(`collection ${name} doesn't exist`);
      return { row: rt.store.indexById(row.id)!, project: g.project };
    },
  };
}
