import { z } from 'zod';
import { route } from './contract.js';
import { VECTOR_LIMITS } from './vector.js';

/**
 * The direct-access endpoint of the local vector store: a Qdrant-compatible REST subset that the
 * token from GET vectordb/credentials opens (spec 3 §4.1 "Direct-access credential"). Bodies follow
 * Qdrant's field names and are not strict, as Qdrant clients send extra fields such as `wait`.
 */
const Collection = z.object({ collection: z.string() });
const Envelope = z.object({ result: z.unknown(), status: z.literal('ok'), time: z.number() });
const base = '/vectordb/collections';
const responseOf = { auth: 'none' as const, status: 200, response: Envelope };
/** Qdrant's `with_payload`: a flag or the payload keys to include. */
const WithPayload = z.union([z.boolean(), z.array(z.string())]).optional();
const Selection = { with_payload: WithPayload, with_vector: z.boolean().optional() };

/** The direct routes under a request body limit (the daemon's MAX_BODY_BYTES; the spec's by default). */
export function vectordbContracts(bodyBytes: number = VECTOR_LIMITS.bodyBytes) {
  const common = { ...responseOf, bodyLimit: bodyBytes };
  return {
    // Qdrant clients read the server version from the root before anything else (no envelope there).
    root: route({
      id: 'vectordb.root',
      method: 'GET',
      path: '/vectordb/',
      summary: 'Server title and the Qdrant API version spoken',
      auth: 'none',
      status: 200,
      response: z.object({ title: z.string(), version: z.string() }),
    }),
    list: route({ id: 'vectordb.list', method: 'GET', path: base, summary: 'Collections the token opens', ...common }),
    info: route({ id: 'vectordb.info', method: 'GET', path: `${base}/{collection}`, summary: 'Collection info', params: Collection, ...common }),
    exists: route({ id: 'vectordb.exists', method: 'GET', path: `${base}/{collection}/exists`, summary: 'Whether the token opens an existing collection', params: Collection, ...common }),
    create: route({
      id: 'vectordb.create',
      method: 'PUT',
      path: `${base}/{collection}`,
      summary: 'Refused: direct tokens cannot create collections',
      params: Collection,
      ...common,
    }),
    upsert: route({
      id: 'vectordb.upsert',
      method: 'PUT',
      path: `${base}/{collection}/points`,
      summary: 'Upsert points',
      params: Collection,
      // Qdrant's two upsert forms: a list of points, or a batch of parallel ids/vectors/payloads.
      body: z.object({
        points: z.array(z.unknown()).optional(),
        batch: z.object({ ids: z.array(z.unknown()), vectors: z.array(z.unknown()), payloads: z.array(z.unknown()).optional() }).optional(),
      }),
      ...common,
    }),
    search: route({
      id: 'vectordb.search',
      method: 'POST',
      path: `${base}/{collection}/points/search`,
      summary: 'Search',
      params: Collection,
      body: z.object({
        vector: z.array(z.number()),
        limit: z.number().int().optional(),
        offset: z.number().int().optional(),
        filter: z.unknown().optional(),
        ...Selection,
        score_threshold: z.number().optional(),
      }),
      ...common,
    }),
    // The universal query API (Qdrant >= 1.10), nearest-neighbour form only: `query` is a vector or {nearest: vector}.
    query: route({
      id: 'vectordb.query',
      method: 'POST',
      path: `${base}/{collection}/points/query`,
      summary: 'Query (nearest neighbours)',
      params: Collection,
      body: z.object({
        query: z.union([z.array(z.number()), z.object({ nearest: z.array(z.number()) })]),
        limit: z.number().int().optional(),
        offset: z.number().int().optional(),
        filter: z.unknown().optional(),
        ...Selection,
        score_threshold: z.number().optional(),
        prefetch: z.unknown().optional(),
        using: z.unknown().optional(),
      }),
      ...common,
    }),
    scroll: route({
      id: 'vectordb.scroll',
      method: 'POST',
      path: `${base}/{collection}/points/scroll`,
      summary: 'Scroll',
      params: Collection,
      body: z.object({ limit: z.number().int().optional(), offset: z.unknown().optional(), filter: z.unknown().optional(), ...Selection }),
      ...common,
    }),
    delete: route({
      id: 'vectordb.delete',
      method: 'POST',
      path: `${base}/{collection}/points/delete`,
      summary: 'Delete points by ids or filter',
      params: Collection,
      body: z.object({ points: z.array(z.unknown()).optional(), filter: z.unknown().optional() }),
      ...common,
    }),
  };
}

export const vectordbRoutes = vectordbContracts();
