import { z } from 'zod';
import { KiB, MiB, route, withProjectIdRule } from './contract.js';
import { PageQuery, Timestamp } from './common.js';
import { lazySchema } from './lazy.js';

/** Limits of spec 3 §8 for the vector API. */
export const VECTOR_LIMITS = {
  nameMax: 48,
  dimensionsMin: 1,
  dimensionsMax: 65536,
  replicasMin: 1,
  replicasMax: 8,
  shardsMax: 64,
  pointsPerUpsert: 1000,
  topKDefault: 10,
  topKMax: 1000,
  filterBytes: 64 * KiB,
  scrollDefault: 50,
  scrollMax: 1000,
  idsPerDelete: 1000,
  bodyBytes: 32 * MiB,
  collectionsPerToken: 256,
} as const;

export const DISTANCES = ['cosine', 'dot', 'euclid'] as const;
export type Distance = (typeof DISTANCES)[number];
export const QUANTIZATION_KINDS = ['none', 'scalar', 'binary'] as const;
export type QuantizationKind = (typeof QUANTIZATION_KINDS)[number];

export const Quantization = lazySchema(() => z.object({
  kind: z.enum(QUANTIZATION_KINDS),
  quantile: z.string().optional(),
  always_ram: z.boolean(),
}));

/** Index resource of spec 3 §2.1. */
export const IndexView = lazySchema(() => z.object({
  name: z.string(),
  resource_path: z.string(),
  collection: z.string(),
  dimensions: z.number().int(),
  distance: z.enum(DISTANCES),
  on_disk: z.boolean(),
  payload_on_disk: z.boolean(),
  quantization: Quantization,
  shards: z.number().int(),
  replicas: z.number().int(),
  state: z.enum(['pending', 'creating', 'ready', 'degraded', 'conflict', 'blocked']),
  ready: z.boolean(),
  collection_status: z.enum(['green', 'yellow', 'red', 'grey']).optional(),
  points_count: z.number().int(),
  vectors_count: z.number().int(),
  segments_count: z.number().int(),
  message: z.string().optional(),
  created_at: Timestamp,
  payload_indexes: z
    .array(z.object({ field: z.string(), type: z.string() }))
    .optional()
    .describe('only on the single GET: the payload indexes recorded through the direct endpoint, by field'),
}));
export type IndexView = z.infer<typeof IndexView>;

/**
 * Create body. Enumerated fields are strings here, not enums: aliases are case-insensitive
 * (spec 3 §4.1), so the service normalizes them and words the 400 itself.
 */
export const CreateIndexBody = lazySchema(() => z.strictObject({
  name: z.string(),
  // Integers are checked by the service so the 400 states the allowed range.
  dimensions: z.number().optional(),
  distance: z.string().optional(),
  on_disk: z.boolean().optional(),
  payload_on_disk: z.boolean().optional(),
  quantization: z
    .strictObject({ kind: z.string().optional(), quantile: z.string().optional(), always_ram: z.boolean().optional() })
    .optional(),
  shards: z.number().optional(),
  replicas: z.number().optional(),
}));
export type CreateIndexBody = z.infer<typeof CreateIndexBody>;

/** Fields fixed at creation (spec 3 §9): accepted by the schema only so the 400 can name them as immutable. */
export const IMMUTABLE_INDEX_FIELDS = ['dimensions', 'distance', 'shards', 'on_disk', 'quantization', 'name'] as const;
export const EDITABLE_INDEX_FIELDS = ['replicas', 'payload_on_disk'] as const;

export const PatchIndexBody = lazySchema(() => z.strictObject({
  replicas: z.number().optional(),
  payload_on_disk: z.boolean().optional(),
  ...Object.fromEntries(IMMUTABLE_INDEX_FIELDS.map((f) => [f, z.unknown().optional()])),
}) as z.ZodType<{ replicas?: number; payload_on_disk?: boolean } & Partial<Record<(typeof IMMUTABLE_INDEX_FIELDS)[number], unknown>>>);
export type PatchIndexBody = z.infer<typeof PatchIndexBody>;

/** A point id: an unsigned integer or a UUID string (checked by the service, which names the point). */
export const PointId = lazySchema(() => z.union([z.number(), z.string()]));
export type PointId = number | string;

/** A filter is validated by the filter parser, which says what is wrong in the 400. */
export const Filter = lazySchema(() => z.unknown());

/**
 * The three limits spec 3 §8 names as settings (MAX_POINTS_PER_REQUEST, MAX_BODY_BYTES, MAX_TOP_K).
 * The exported contracts carry the spec's values; the daemon builds its own from its settings
 * with `vectorContracts`, so one definition serves both.
 */
export interface VectorSettings {
  pointsPerUpsert: number;
  bodyBytes: number;
  topKMax: number;
}

const upsertBody = (s: VectorSettings) =>
  z.strictObject({
    points: z
      .array(
        z.strictObject({
          id: z.unknown().optional(),
          vector: z.array(z.number()),
          payload: z.record(z.string(), z.unknown()).nullable().optional(),
        }),
      )
      .min(1, 'points must not be empty')
      .max(s.pointsPerUpsert, `at most ${s.pointsPerUpsert} points per upsert`),
  });
export const UpsertBody = lazySchema(() => upsertBody(VECTOR_LIMITS));
export type UpsertBody = z.infer<typeof UpsertBody>;

const queryBody = (s: VectorSettings) =>
  z.strictObject({
    vector: z.array(z.number()),
    top_k: z.number().int().min(1, 'top_k must be at least 1').max(s.topKMax, `top_k must be at most ${s.topKMax}`).optional(),
    filter: Filter.optional(),
    with_payload: z.boolean().optional(),
    with_vector: z.boolean().optional(),
    score_threshold: z.number().optional(),
    offset: z.number().int().min(0, 'offset must not be negative').optional(),
  });
export const QueryBody = lazySchema(() => queryBody(VECTOR_LIMITS));
export type QueryBody = z.infer<typeof QueryBody>;

export const ScrollBody = lazySchema(() => z.strictObject({
  limit: z.number().int().min(1, 'limit must be at least 1').max(VECTOR_LIMITS.scrollMax, `limit must be at most ${VECTOR_LIMITS.scrollMax}`).optional(),
  offset: z.unknown().optional(),
}));
export type ScrollBody = z.infer<typeof ScrollBody>;

export const DeletePointsBody = lazySchema(() => z.strictObject({
  ids: z.array(z.unknown()).max(VECTOR_LIMITS.idsPerDelete, `at most ${VECTOR_LIMITS.idsPerDelete} ids per delete`).optional(),
  filter: Filter.optional(),
}));
export type DeletePointsBody = z.infer<typeof DeletePointsBody>;

/** Extension (docs/decisions/cli-small.md): the live number of points, all or those a filter keeps. */
export const CountBody = lazySchema(() => z.strictObject({ filter: Filter.optional() }));
export type CountBody = z.infer<typeof CountBody>;

export const ScoredPoint = lazySchema(() => z.object({
  id: PointId,
  score: z.number(),
  payload: z.record(z.string(), z.unknown()).optional(),
  vector: z.array(z.number()).optional(),
}));
export type ScoredPoint = z.infer<typeof ScoredPoint>;

export const IndexParams = lazySchema(() => z.object({ projectID: z.string(), name: z.string() }));
const ProjectParams = lazySchema(() => z.object({ projectID: z.string() }));

export const VectorCredentials = lazySchema(() => z.object({
  service_url: z.string(),
  external_service_url: z.string().optional(),
  token: z.string().optional(),
  collection_prefix: z.string(),
  collections: z.array(z.string()),
  truncated: z.boolean(),
  note: z.string(),
}));
export type VectorCredentials = z.infer<typeof VectorCredentials>;

/** One dependency of the vector health report (spec 3 §4.1 "Health"). */
export const VectorDependency = lazySchema(() => z.object({ ok: z.boolean(), latency_ms: z.number(), error: z.string().optional() }));
export const VectorHealth = lazySchema(() => z.object({
  status: z.enum(['ok', 'degraded']),
  dependencies: z.object({ vector_store: VectorDependency, orchestration: VectorDependency, database: VectorDependency }),
}));
export type VectorHealth = z.infer<typeof VectorHealth>;

const base = '/v1/projects/{projectID}/indexes';

/** The vector API's contracts under the given limits (the daemon's settings; the spec's by default). */
export function vectorContracts(s: VectorSettings = VECTOR_LIMITS) {
  const Upsert = lazySchema(() => upsertBody(s));
  const Query = lazySchema(() => queryBody(s));
  const dataRoute = <const V extends string, B extends z.ZodType, R extends z.ZodType>(verb: V, summary: string, body: B, response: R) =>
    route({
      id: `indexes.${verb}`,
      method: 'POST',
      path: `${base}/{name}:${verb}` as `${typeof base}/{name}:${V}`,
      summary,
      auth: 'any',
      params: IndexParams,
      body,
      bodyLimit: s.bodyBytes,
      status: 200,
      response,
    });

  const routes = withProjectIdRule('uuid-400', {
    list: route({
      id: 'indexes.list',
      method: 'GET',
      path: base,
      summary: 'List the indexes of a project',
      auth: 'any',
      params: ProjectParams,
      query: PageQuery,
      status: 200,
      response: lazySchema(() => z.object({ indexes: z.array(IndexView), next_page_token: z.string().optional() })),
    }),
    create: route({
      id: 'indexes.create',
      method: 'POST',
      path: base,
      summary: 'Create an index; it starts pending',
      auth: 'any',
      params: ProjectParams,
      body: CreateIndexBody,
      bodyLimit: s.bodyBytes,
      status: 201,
      response: IndexView,
    }),
    get: route({
      id: 'indexes.get',
      method: 'GET',
      path: `${base}/{name}`,
      summary: 'One index, wrapped under index',
      auth: 'any',
      params: IndexParams,
      status: 200,
      response: lazySchema(() => z.object({ index: IndexView })),
    }),
    patch: route({
      id: 'indexes.patch',
      method: 'PATCH',
      path: `${base}/{name}`,
      summary: 'Edit replicas or payload_on_disk (admin)',
      auth: 'any',
      params: IndexParams,
      body: PatchIndexBody,
      bodyLimit: s.bodyBytes,
      status: 200,
      response: IndexView,
    }),
    delete: route({
      id: 'indexes.delete',
      method: 'DELETE',
      path: `${base}/{name}`,
      summary: 'Delete an index and every vector in it (admin)',
      auth: 'any',
      params: IndexParams,
      status: 204,
      response: lazySchema(() => z.undefined()),
    }),
    upsert: dataRoute('upsert', 'Write points (all or nothing)', Upsert, lazySchema(() => z.object({ index: z.string(), upserted_count: z.number().int() }))),
    query: dataRoute('query', 'Similarity search', Query, lazySchema(() => z.object({ index: z.string(), results: z.array(ScoredPoint) }))),
    scroll: dataRoute(
      'scroll',
      'Browse points in id order',
      ScrollBody,
      lazySchema(() =>
        z.object({
          index: z.string(),
          points: z.array(z.object({ id: PointId, payload: z.record(z.string(), z.unknown()).optional() })),
          next_offset: PointId.optional(),
        }),
      ),
    ),
    deletePoints: dataRoute(
      'delete-points',
      'Delete points by ids or by filter',
      DeletePointsBody,
      lazySchema(() => z.object({ index: z.string(), status: z.string(), ids_requested: z.number().int().optional() })),
    ),
    count: dataRoute('count', 'Count points now (points_count of the index view lags by design)', CountBody, lazySchema(() => z.object({ index: z.string(), count: z.number().int() }))),
    /** Catches POSTs to `{name}` with no verb or an unknown one, so both answer 400 (spec 3 §4.1). */
    customVerb: route({
      id: 'indexes.customVerb',
      method: 'POST',
      path: `${base}/{target...}`,
      summary: 'Custom-method dispatch fallback: unknown or missing :verb',
      auth: 'any',
      params: lazySchema(() => z.object({ projectID: z.string(), target: z.string() })),
      bodyLimit: s.bodyBytes,
      status: 400,
      response: lazySchema(() => z.never()),
    }),
    /** The vector API's own health (the core /healthz keeps its shape); 503 when degraded. */
    health: route({
      id: 'vector.healthz',
      method: 'GET',
      path: '/vector/healthz',
      summary: 'Health of the vector API: vector store, orchestration, database',
      auth: 'none',
      unlimited: true,
      status: 200,
      response: VectorHealth,
    }),
    credentials: route({
      id: 'vectordb.credentials',
      method: 'GET',
      path: '/v1/projects/{projectID}/vectordb/credentials',
      summary: 'Direct-access credential for the vector store (admin)',
      auth: 'any',
      params: ProjectParams,
      status: 200,
      response: VectorCredentials,
    }),
  });
  return { UpsertBody: Upsert, QueryBody: Query, routes };
}

export const vectorRoutes = vectorContracts().routes;

export const DATA_VERBS = ['upsert', 'query', 'scroll', 'delete-points', 'count'] as const;
