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
const common = { auth: 'none' as const, bodyLimit: VECTOR_LIMITS.bodyBytes, status: 200, response: Envelope };

export const vectordbRoutes = {
  list: route({ id: 'vectordb.list', method: 'GET', path: base, summary: 'Collections the token opens', ...common }),
  info: route({ id: 'vectordb.info', method: 'GET', path: `${base}/{collection}`, summary: 'Collection info', params: Collection, ...common }),
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
    body: z.object({ points: z.array(z.unknown()) }),
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
      with_payload: z.boolean().optional(),
      with_vector: z.boolean().optional(),
      score_threshold: z.number().optional(),
    }),
    ...common,
  }),
  scroll: route({
    id: 'vectordb.scroll',
    method: 'POST',
    path: `${base}/{collection}/points/scroll`,
    summary: 'Scroll',
    params: Collection,
    body: z.object({ limit: z.number().int().optional(), offset: z.unknown().optional(), filter: z.unknown().optional() }),
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
