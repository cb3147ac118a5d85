import { z } from 'zod';
import { KiB, route, withProjectIdRule } from './contract.js';
import { PageQuery, Timestamp } from './common.js';
import { lazySchema } from './lazy.js';

/** Size classes of spec 3 §4.2: container limit and the usable 75 percent (maxmemory). */
export const SIZE_CLASSES = {
  small: { memory_limit: '256Mi', maxmemory: '192Mi', bytes: 192 * 1024 * 1024, limitBytes: 256 * 1024 * 1024 },
  medium: { memory_limit: '1Gi', maxmemory: '768Mi', bytes: 768 * 1024 * 1024, limitBytes: 1024 * 1024 * 1024 },
  large: { memory_limit: '4Gi', maxmemory: '3Gi', bytes: 3 * 1024 * 1024 * 1024, limitBytes: 4 * 1024 * 1024 * 1024 },
} as const;
export type SizeClass = keyof typeof SIZE_CLASSES;

export const MAXMEMORY_POLICIES = [
  'noeviction',
  'allkeys-lru',
  'allkeys-lfu',
  'allkeys-random',
  'volatile-lru',
  'volatile-lfu',
  'volatile-random',
  'volatile-ttl',
] as const;
export type MaxmemoryPolicy = (typeof MAXMEMORY_POLICIES)[number];

export const CACHE_STATES = ['provisioning', 'ready', 'degraded', 'deleting', 'unknown'] as const;
export type CacheState = (typeof CACHE_STATES)[number];

export const CACHE_NAME_RE = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
export const CACHE_NAME_RULE = 'name must be 1 to 40 characters matching ^[a-z]([-a-z0-9]*[a-z0-9])?$';
/** Kubernetes-style quantity, as persistence.size is written in the spec (2Gi). */
const QUANTITY_RE = /^[1-9][0-9]*(Ki|Mi|Gi|Ti)$/;

export const CacheName = lazySchema(() => z.string().max(40, CACHE_NAME_RULE).regex(CACHE_NAME_RE, CACHE_NAME_RULE));

export const CacheCreateBody = lazySchema(() => z.strictObject({
  name: CacheName,
  size_class: z.enum(['small', 'medium', 'large'], { error: 'size class must be one of small, medium, large' }).default('small'),
  version: z.string().max(32).default(''),
  maxmemory_policy: z.enum(MAXMEMORY_POLICIES, { error: `policy must be one of ${MAXMEMORY_POLICIES.join(', ')}` }).default('noeviction'),
  external_exposure: z.boolean().default(false),
  persistence: z
    .strictObject({
      enabled: z.boolean().default(true),
      size: z.string().regex(QUANTITY_RE, 'must be a quantity such as 2Gi').default('2Gi'),
      storage_class_name: z.string().max(63).default(''),
    })
    .default({ enabled: true, size: '2Gi', storage_class_name: '' }),
}));
export type CacheCreateBody = z.infer<typeof CacheCreateBody>;

/** A condition object (spec 1 §2.1): its own status string passed through unchanged. */
export const Condition = lazySchema(() => z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
}));
export type Condition = z.infer<typeof Condition>;

/** Cache instance of spec 3 §2.2. There is no password field. */
export const MemorystoreView = lazySchema(() => z.object({
  name: z.string(),
  resource_path: z.string(),
  project_id: z.string(),
  size_class: z.enum(['small', 'medium', 'large']),
  version: z.string().optional(),
  maxmemory_policy: z.enum(MAXMEMORY_POLICIES),
  persistence: z.object({ enabled: z.boolean(), size: z.string(), storage_class_name: z.string().optional() }),
  state: z.enum(CACHE_STATES),
  ready: z.boolean(),
  message: z.string().optional(),
  external_exposure: z.boolean(),
  externally_reachable: z.boolean(),
  external_endpoint: z.string().optional(),
  reachable_scope: z.literal('internet'),
  memory_limit: z.string(),
  maxmemory: z.string(),
  ready_replicas: z.number().int(),
  replicas: z.number().int(),
  connection: z.object({ host: z.string(), port: z.number().int(), username: z.literal('default'), credential_secret: z.string() }),
  conditions: z.array(Condition),
  created_at: Timestamp,
}));
export type MemorystoreView = z.infer<typeof MemorystoreView>;

export const CacheCredential = lazySchema(() => z.object({
  username: z.literal('default'),
  password: z.string(),
  uri: z.string(),
  external_uri: z.string().optional(),
}));
export type CacheCredential = z.infer<typeof CacheCredential>;

export const CacheStats = lazySchema(() => z.object({
  memorystore: z.string(),
  name: z.string(),
  used_memory_bytes: z.number().optional(),
  used_memory_human: z.string().optional(),
  maxmemory_bytes: z.number().optional(),
  maxmemory_policy: z.string().optional(),
  used_memory_pct: z.number().optional(),
  connected_clients: z.number().optional(),
  blocked_clients: z.number().optional(),
  keyspace_hits: z.number().optional(),
  keyspace_misses: z.number().optional(),
  hit_rate: z.number().optional(),
  evicted_keys: z.number().optional(),
  expired_keys: z.number().optional(),
  total_commands_processed: z.number().optional(),
  instantaneous_ops_per_sec: z.number().optional(),
  uptime_in_seconds: z.number().optional(),
  db_keys: z.number().optional(),
  note: z.string(),
}));
export type CacheStats = z.infer<typeof CacheStats>;

export const CacheHealth = lazySchema(() => z.object({
  status: z.enum(['ok', 'degraded']),
  checks: z.object({ orchestration: z.string(), memorystore_crd: z.string(), database: z.string(), session_key: z.string() }),
}));

const ProjectParams = lazySchema(() => z.object({ projectID: z.string() }));
const InstanceParams = lazySchema(() => z.object({ projectID: z.string(), name: z.string() }));
const BASE = '/v1/projects/{projectID}/memorystores';

export const cacheRoutes = withProjectIdRule('uuid-400', {
  list: route({
    id: 'cache.list',
    method: 'GET',
    path: BASE,
    summary: 'List cache instances of a project',
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ memorystores: z.array(MemorystoreView), next_page_token: z.string().optional() })),
  }),
  get: route({
    id: 'cache.get',
    method: 'GET',
    path: `${BASE}/{name}`,
    summary: 'One cache instance (never its password)',
    auth: 'any',
    params: InstanceParams,
    status: 200,
    response: MemorystoreView,
  }),
  stats: route({
    id: 'cache.stats',
    method: 'GET',
    path: `${BASE}/{name}/stats`,
    summary: 'Live statistics read from the server (3 s budget)',
    auth: 'any',
    params: InstanceParams,
    status: 200,
    response: CacheStats,
  }),
  create: route({
    id: 'cache.create',
    method: 'POST',
    path: BASE,
    summary: 'Create a cache instance; the password is returned once',
    auth: 'any',
    params: ProjectParams,
    body: CacheCreateBody,
    bodyLimit: 16 * KiB,
    status: 201,
    response: lazySchema(() => z.object({ memorystore: MemorystoreView, credential: CacheCredential, note: z.string() })),
  }),
  delete: route({
    id: 'cache.delete',
    method: 'DELETE',
    path: `${BASE}/{name}`,
    summary: 'Delete a cache instance and its data (admin)',
    auth: 'any',
    params: InstanceParams,
    status: 202,
    response: lazySchema(() => z.object({ name: z.string(), resource_path: z.string(), state: z.literal('deleting'), ready: z.literal(false), note: z.string() })),
  }),
  rotate: route({
    id: 'cache.rotate-credential',
    method: 'POST',
    path: `${BASE}/{name}/rotate-credential`,
    summary: 'Generate a new password; the instance restarts at once to apply it (admin)',
    auth: 'any',
    params: InstanceParams,
    body: lazySchema(() => z.strictObject({})),
    status: 200,
    response: lazySchema(() => z.object({ credential: CacheCredential, note: z.string() })),
  }),
  healthz: route({
    id: 'cache.healthz',
    method: 'GET',
    path: '/cache/healthz',
    summary: 'Readiness of the cache API',
    auth: 'none',
    unlimited: true,
    status: 200,
    response: CacheHealth,
  }),
  livez: route({
    id: 'cache.livez',
    method: 'GET',
    path: '/cache/livez',
    summary: 'Liveness of the cache API',
    auth: 'none',
    unlimited: true,
    status: 200,
    response: lazySchema(() => z.object({ status: z.literal('ok') })),
  }),
});
