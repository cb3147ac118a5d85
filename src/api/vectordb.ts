import { z } from 'zod';
import { route } from './contract.js';
import { VECTOR_LIMITS } from './vector.js';
import { lazySchema } from './lazy.js';

/**
 * The direct-access endpoint of the local vector store: a Qdrant-compatible REST subset that the
 * token from GET vectordb/credentials opens (spec 3 §4.1 "Direct-access credential"). Bodies follow
 * Qdrant's field names and are not strict, as Qdrant clients send extra fields such as `wait`.
 */
const Collection = lazySchema(() => z.object({ collection: z.string() }));
const Envelope = lazySchema(() => z.object({ result: z.unknown(), status: z.literal('ok'), time: z.number() }));
/** Where the direct routes live on the daemon's own port. */
export const VECTORDB_PREFIX = '/vectordb';
const base = `${VECTORDB_PREFIX}/collections`;
const responseOf = { auth: 'none' as const, status: 200, response: Envelope };
/** Qdrant's `with_payload`: a flag or the payload keys to include. */
const WithPayload = lazySchema(() => z.union([z.boolean(), z.array(z.string())]).optional());
const Selection = () => ({ with_payload: WithPayload, with_vector: z.boolean().optional() });
/** A vector, or a point id standing for that point's vector (recommend, query). */
const VectorOrId = lazySchema(() => z.union([z.array(z.number()), z.number(), z.string()]));
/** Which points an operation touches: ids or a filter (Qdrant's points selector). */
const Selector = () => ({ points: z.array(z.unknown()).optional(), filter: z.unknown().optional() });
const SearchFields = () => ({
  vector: z.array(z.number()),
  limit: z.number().int().optional(),
  offset: z.number().int().optional(),
  filter: z.unknown().optional(),
  ...Selection(),
  score_threshold: z.number().nullish(),
});
const RecommendFields = () => ({
  positive: z.array(VectorOrId).optional(),
  negative: z.array(VectorOrId).optional(),
  strategy: z.enum(['average_vector', 'best_score', 'sum_scores']).nullish(),
  limit: z.number().int().optional(),
  offset: z.number().int().nullish(),
  filter: z.unknown().optional(),
  ...Selection(),
  score_threshold: z.number().nullish(),
  using: z.unknown().optional(),
  lookup_from: z.unknown().optional(),
});
/** Scroll's `order_by`: a payload key, or the key with a direction and a start value. */
const OrderBy = lazySchema(() => z.union([
  z.string(),
  z.object({ key: z.string(), direction: z.enum(['asc', 'desc']).nullish(), start_from: z.union([z.number(), z.string()]).nullish() }),
]));
const PayloadIndex = lazySchema(() => z.object({ collection: z.string(), field: z.string() }));

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
      response: lazySchema(() => z.object({ title: z.string(), version: z.string() })),
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
      body: lazySchema(() => z.object({
        points: z.array(z.unknown()).optional(),
        batch: z.object({ ids: z.array(z.unknown()), vectors: z.array(z.unknown()), payloads: z.array(z.unknown()).optional() }).optional(),
      })),
      ...common,
    }),
    search: route({ id: 'vectordb.search', method: 'POST', path: `${base}/{collection}/points/search`, summary: 'Search', params: Collection, body: lazySchema(() => z.object(SearchFields())), ...common }),
    searchBatch: route({
      id: 'vectordb.search-batch',
      method: 'POST',
      path: `${base}/{collection}/points/search/batch`,
      summary: 'Several searches in one request, answered in order',
      params: Collection,
      body: lazySchema(() => z.object({ searches: z.array(z.object(SearchFields())) })),
      ...common,
    }),
    recommend: route({
      id: 'vectordb.recommend',
      method: 'POST',
      path: `${base}/{collection}/points/recommend`,
      summary: 'Recommend: points near the positive examples (ids or vectors) and away from the negative ones',
      params: Collection,
      body: lazySchema(() => z.object(RecommendFields())),
      ...common,
    }),
    // The universal query API (Qdrant >= 1.10): nearest to a vector or a point, recommend, or no query (id order).
    query: route({
      id: 'vectordb.query',
      method: 'POST',
      path: `${base}/{collection}/points/query`,
      summary: 'Query: nearest (a vector, a point id or {nearest}), {recommend}, or no query for points in id order',
      params: Collection,
      body: lazySchema(() => z.object({
        query: z
          .union([
            VectorOrId,
            z.object({ nearest: VectorOrId }),
            z.object({ recommend: z.object({ positive: z.array(VectorOrId).optional(), negative: z.array(VectorOrId).optional(), strategy: RecommendFields().strategy }) }),
          ])
          .nullish(),
        limit: z.number().int().optional(),
        offset: z.number().int().nullish(),
        filter: z.unknown().optional(),
        ...Selection(),
        score_threshold: z.number().nullish(),
        prefetch: z.unknown().optional(),
        using: z.unknown().optional(),
        lookup_from: z.unknown().optional(),
      })),
      ...common,
    }),
    scroll: route({
      id: 'vectordb.scroll',
      method: 'POST',
      path: `${base}/{collection}/points/scroll`,
      summary: 'Scroll in id order, or by a payload key with order_by',
      params: Collection,
      body: lazySchema(() => z.object({ limit: z.number().int().optional(), offset: z.unknown().optional(), filter: z.unknown().optional(), order_by: OrderBy.nullish(), ...Selection() })),
      ...common,
    }),
    count: route({
      id: 'vectordb.count',
      method: 'POST',
      path: `${base}/{collection}/points/count`,
      summary: 'Number of points, all or matching a filter (always exact)',
      params: Collection,
      body: lazySchema(() => z.object({ filter: z.unknown().optional(), exact: z.boolean().optional() })),
      ...common,
    }),
    retrieve: route({
      id: 'vectordb.retrieve',
      method: 'POST',
      path: `${base}/{collection}/points`,
      summary: 'Points by id (absent ids are left out)',
      params: Collection,
      body: lazySchema(() => z.object({ ids: z.array(z.unknown()), ...Selection() })),
      ...common,
    }),
    point: route({
      id: 'vectordb.point',
      method: 'GET',
      path: `${base}/{collection}/points/{id}`,
      summary: 'One point with its payload and vector',
      params: lazySchema(() => z.object({ collection: z.string(), id: z.string() })),
      ...common,
    }),
    setPayload: route({
      id: 'vectordb.set-payload',
      method: 'POST',
      path: `${base}/{collection}/points/payload`,
      summary: 'Merge keys into the payload of the selected points (under `key` when given)',
      params: Collection,
      body: lazySchema(() => z.object({ payload: z.record(z.string(), z.unknown()), key: z.string().nullish(), ...Selector() })),
      ...common,
    }),
    overwritePayload: route({
      id: 'vectordb.overwrite-payload',
      method: 'PUT',
      path: `${base}/{collection}/points/payload`,
      summary: 'Replace the payload of the selected points',
      params: Collection,
      body: lazySchema(() => z.object({ payload: z.record(z.string(), z.unknown()), key: z.string().nullish(), ...Selector() })),
      ...common,
    }),
    deletePayload: route({
      id: 'vectordb.delete-payload',
      method: 'POST',
      path: `${base}/{collection}/points/payload/delete`,
      summary: 'Remove payload keys from the selected points',
      params: Collection,
      body: lazySchema(() => z.object({ keys: z.array(z.string()), ...Selector() })),
      ...common,
    }),
    clearPayload: route({
      id: 'vectordb.clear-payload',
      method: 'POST',
      path: `${base}/{collection}/points/payload/clear`,
      summary: 'Remove the whole payload of the selected points',
      params: Collection,
      body: lazySchema(() => z.object(Selector())),
      ...common,
    }),
    updateVectors: route({
      id: 'vectordb.update-vectors',
      method: 'PUT',
      path: `${base}/{collection}/points/vectors`,
      summary: 'Replace the vectors of existing points, keeping their payloads',
      params: Collection,
      body: lazySchema(() => z.object({ points: z.array(z.object({ id: z.unknown(), vector: z.unknown() })) })),
      ...common,
    }),
    drop: route({
      id: 'vectordb.drop',
      method: 'DELETE',
      path: `${base}/{collection}`,
      summary: 'Delete the collection (the platform index) and its points',
      params: Collection,
      ...common,
    }),
    createPayloadIndex: route({
      id: 'vectordb.create-payload-index',
      method: 'PUT',
      path: `${base}/{collection}/index`,
      summary: 'Accepted and recorded (shown in payload_schema); filters work with or without it',
      params: Collection,
      body: lazySchema(() => z.object({ field_name: z.string(), field_schema: z.unknown().optional() })),
      ...common,
    }),
    deletePayloadIndex: route({
      id: 'vectordb.delete-payload-index',
      method: 'DELETE',
      path: `${base}/{collection}/index/{field}`,
      summary: 'Forget a recorded payload index',
      params: PayloadIndex,
      ...common,
    }),
    delete: route({
      id: 'vectordb.delete',
      method: 'POST',
      path: `${base}/{collection}/points/delete`,
      summary: 'Delete points by ids or filter',
      params: Collection,
      body: lazySchema(() => z.object({ points: z.array(z.unknown()).optional(), filter: z.unknown().optional() })),
      ...common,
    }),
  };
}

export const vectordbRoutes = vectordbContracts();
