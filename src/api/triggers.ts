import { z } from 'zod';
import { MiB, route, withProjectIdRule } from './contract.js';
import { PageQuery, Timestamp } from './common.js';
import { ProjectParams } from './projects.js';
import { SERVICE_NAME_RE } from './serverless.js';
import { lazySchema } from './lazy.js';

/**
 * Triggers (spec 2 §2.4, §4.4, §6, §7; spec 1 §6.2): a schedule, a topic or a bucket that POSTs
 * to a serverless service, function or agent of the same project, with retries and a bounded
 * firing history. The sub-objects the spec leaves unshown (pubsub, objectstore, the retry object)
 * are chosen in docs/decisions/triggers.md. Bodies are strict: an unknown field is a 400 naming it.
 */

export const TRIGGER_NAME_RE = SERVICE_NAME_RE;
export const TRIGGER_NAME_MAX = 52;
export const SOURCE_TYPES = ['schedule', 'pubsub', 'objectstore'] as const;
/** Bucket names: a DNS-label-like folder name (docs/decisions/triggers.md). */
export const BUCKET_NAME_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** An object key: 1 to 1024 bytes, relative, no `.`/`..` or dot-leading segments, no backslash or NUL. */
export const OBJECT_KEY_MAX = 1024;
/** Object uploads through `platform objects put` (a delivery to a function caps at 8 MiB anyway). */
export const OBJECT_BODY_LIMIT = 32 * MiB;
export const TRIGGER_BODY_LIMIT = 64 * 1024;

/** Retry defaults and bounds (docs/decisions/triggers.md). */
export const RETRY_DEFAULTS = { max_attempts: 3, backoff: { initial_seconds: 1, maximum_seconds: 60, multiplier: 2 } } as const;
export const RETRY_BOUNDS = { max_attempts: [1, 100], initial_seconds: [0.01, 3600], maximum_seconds: [0.01, 3600], multiplier: [1, 10] } as const;

const Num = (name: string, [lo, hi]: readonly [number, number]) =>
  z.number().min(lo, `${name} must be between ${lo} and ${hi}`).max(hi, `${name} must be between ${lo} and ${hi}`);

export const Backoff = lazySchema(() => z.strictObject({
  initial_seconds: Num('retry.backoff.initial_seconds', RETRY_BOUNDS.initial_seconds).optional().describe('wait before the second attempt; default 1'),
  maximum_seconds: Num('retry.backoff.maximum_seconds', RETRY_BOUNDS.maximum_seconds).optional().describe('cap of any wait; default 60'),
  multiplier: Num('retry.backoff.multiplier', RETRY_BOUNDS.multiplier).optional().describe('each wait is the previous times this; default 2'),
}));
export const RetryInput = lazySchema(() => z.strictObject({
  max_attempts: z.number().int('retry.max_attempts must be an integer').pipe(Num('retry.max_attempts', RETRY_BOUNDS.max_attempts)).optional().describe('attempts in all, the first included; default 3'),
  backoff: Backoff.optional(),
}));

export const ScheduleSource = lazySchema(() => z.strictObject({
  cron: z.string().describe('five fields (minute hour day-of-month month day-of-week), or six with seconds first'),
  time_zone: z.string().optional().describe('IANA zone name; default UTC'),
  payload: z.string().optional().describe('JSON text delivered unchanged as the POST body'),
}));
export const PubsubSource = lazySchema(() => z.strictObject({
  topic: z.string().describe('a topic of this project'),
  subscription: z.string().optional().describe('an existing pull subscription of that topic; default: the trigger makes trigger-<name>'),
}));
export const ObjectstoreSource = lazySchema(() => z.strictObject({
  bucket: z.string().describe('a project bucket (a folder under the state directory)'),
  prefix: z.string().optional().describe('only keys starting with this fire'),
}));
export const SourceInput = lazySchema(() => z.strictObject({
  type: z.enum(SOURCE_TYPES),
  schedule: ScheduleSource.optional(),
  pubsub: PubsubSource.optional(),
  objectstore: ObjectstoreSource.optional(),
}));
export type SourceInput = z.infer<typeof SourceInput>;
export const TargetInput = lazySchema(() => z.strictObject({
  service: z.string().describe('a serverless service, function or agent of this project (a service first)'),
  path: z.string().optional().describe('sub-path POSTed to; default / (/invoke for an agent)'),
}));

export const TriggerCreateBody = lazySchema(() => z.strictObject({
  name: z.string(),
  target: TargetInput,
  source: SourceInput,
  retry: RetryInput.optional(),
}));
export type TriggerCreateBody = z.infer<typeof TriggerCreateBody>;
export const TriggerPatchBody = lazySchema(() => z.strictObject({
  name: z.string().optional().describe('a trigger cannot be renamed: only its own name is accepted'),
  target: TargetInput.partial().optional(),
  source: SourceInput.optional().describe('replaces the whole source'),
  retry: RetryInput.optional().describe('merged onto the current retry'),
}));
export type TriggerPatchBody = z.infer<typeof TriggerPatchBody>;

export const FIRING_STATUSES = ['pending', 'delivering', 'retrying', 'succeeded', 'failed', 'dead_lettered'] as const;
export const FiringView = lazySchema(() => z.object({
  id: z.string(),
  scheduled_time: Timestamp.describe('when it fell due (schedule), was published (pubsub) or arrived (objectstore)'),
  actual_time: Timestamp.optional().describe('when the first attempt started'),
  attempts: z.number().int(),
  status: z.enum(FIRING_STATUSES),
  http_status: z.number().int().optional(),
  duration_ms: z.number().optional().describe('from the first attempt to the final answer'),
  error: z.string().optional(),
  catch_up: z.boolean().optional().describe('a schedule run that fell due while the daemon was down'),
  manual: z.boolean().optional().describe('fired with :fire'),
}));
export type FiringView = z.infer<typeof FiringView>;

export const TriggerView = lazySchema(() => z.object({
  name: z.string(),
  project: z.string().describe('projects/<short>/triggers/<name>'),
  target: z.object({ service: z.string(), path: z.string(), kind: z.enum(['service', 'function', 'agent']) }),
  source: z.object({
    type: z.enum(SOURCE_TYPES),
    schedule: z.object({ cron: z.string(), time_zone: z.string(), payload: z.string().optional() }).optional(),
    pubsub: z.object({ topic: z.string(), subscription: z.string() }).optional(),
    objectstore: z.object({ bucket: z.string(), prefix: z.string().optional() }).optional(),
  }),
  retry: z.object({ max_attempts: z.number().int(), backoff: z.object({ initial_seconds: z.number(), maximum_seconds: z.number(), multiplier: z.number() }) }),
  next_fire_time: Timestamp.optional().describe('schedules only'),
  created_at: Timestamp,
  updated_at: Timestamp,
  firings: z.array(FiringView).optional().describe('newest first, bounded; only on the single GET'),
}));
export type TriggerView = z.infer<typeof TriggerView>;

export const TriggerParams = lazySchema(() => ProjectParams.extend({ name: z.string() }));
export const BucketParams = lazySchema(() => ProjectParams.extend({ bucket: z.string() }));
export const ObjectParams = lazySchema(() => BucketParams.extend({ key: z.string() }));
export const ObjectView = lazySchema(() => z.object({ bucket: z.string(), key: z.string(), size: z.number().int(), updated_at: Timestamp }));
export type ObjectView = z.infer<typeof ObjectView>;
export const ObjectsQuery = lazySchema(() => PageQuery.extend({ prefix: z.string().optional() }).strict());

const base = '/v1/projects/{projectID}/triggers';
const objects = '/v1/projects/{projectID}/buckets/{bucket}/objects';

export const triggerRoutes = withProjectIdRule('uuid-404', {
  list: route({
    id: 'triggers.list',
    method: 'GET',
    path: base,
    summary: "List a project's triggers (next fire time of schedules; no history)",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ triggers: z.array(TriggerView), next_page_token: z.string().optional() })),
  }),
  create: route({
    id: 'triggers.create',
    method: 'POST',
    path: base,
    summary: 'Create a trigger; the target must exist in this project (a serverless service first, then a function or agent)',
    auth: 'any',
    params: ProjectParams,
    body: TriggerCreateBody,
    bodyLimit: TRIGGER_BODY_LIMIT,
    status: 202,
    response: TriggerView,
  }),
  get: route({
    id: 'triggers.get',
    method: 'GET',
    path: `${base}/{name}`,
    summary: 'One trigger with its firing history, newest first',
    auth: 'any',
    params: TriggerParams,
    status: 200,
    response: TriggerView,
  }),
  patch: route({
    id: 'triggers.patch',
    method: 'PATCH',
    path: `${base}/{name}`,
    summary: 'Update a trigger (target merged, source replaced, retry merged)',
    auth: 'any',
    params: TriggerParams,
    body: TriggerPatchBody,
    bodyLimit: TRIGGER_BODY_LIMIT,
    status: 200,
    response: TriggerView,
  }),
  delete: route({
    id: 'triggers.delete',
    method: 'DELETE',
    path: `${base}/{name}`,
    summary: 'Delete a trigger and its pending deliveries',
    auth: 'any',
    params: TriggerParams,
    status: 204,
    response: lazySchema(() => z.undefined()),
  }),
  fire: route({
    id: 'triggers.fire',
    method: 'POST',
    path: `${base}/{name}:fire`,
    summary: 'Fire once now (testing): a schedule sends its payload; 202 with the queued firing',
    auth: 'any',
    params: TriggerParams,
    status: 202,
    response: FiringView,
  }),
  listObjects: route({
    id: 'objects.list',
    method: 'GET',
    path: objects,
    summary: "A bucket's objects by key (?prefix)",
    auth: 'any',
    params: BucketParams,
    query: ObjectsQuery,
    status: 200,
    response: lazySchema(() => z.object({ objects: z.array(ObjectView), next_page_token: z.string().optional() })),
  }),
  putObject: route({
    id: 'objects.put',
    method: 'PUT',
    path: `${objects}/{key...}`,
    summary: 'Store an object (raw body); object-store triggers on the bucket fire',
    auth: 'any',
    params: ObjectParams,
    bodyLimit: OBJECT_BODY_LIMIT,
    status: 201,
    response: ObjectView,
  }),
  getObject: route({
    id: 'objects.get',
    method: 'GET',
    path: `${objects}/{key...}`,
    summary: "An object's bytes",
    auth: 'any',
    params: ObjectParams,
    status: 200,
    response: lazySchema(() => z.string()),
  }),
  deleteObject: route({
    id: 'objects.delete',
    method: 'DELETE',
    path: `${objects}/{key...}`,
    summary: 'Delete an object',
    auth: 'any',
    params: ObjectParams,
    status: 204,
    response: lazySchema(() => z.undefined()),
  }),
});
