import { z } from 'zod';
import { HealthDependency } from './health.js';
import { MiB, route, withProjectIdRule } from './contract.js';
import { PageQuery, Timestamp, isStrictBase64, printable, printableTextProblem } from './common.js';
import { ProjectParams } from './projects.js';
import { parseBytes, parseDuration } from './quantity.js';
import { lazySchema } from './lazy.js';

/** Messaging API contract (spec 3 §2.3, §2.4, §4.3). */

export const MESSAGING_BODY_LIMIT = 1 * MiB;
export const PUBLISH_BODY_LIMIT = 4 * MiB;
export const MAX_PUBLISH_MESSAGES = 100;
export const MAX_PULL_MESSAGES = 100;
export const MAX_PULL_TIMEOUT_MS = 20_000;
export const MAX_ACK_IDS = 1000;

export const NAME_RULE = /^[a-z]([a-z0-9-]*[a-z0-9])?$/;
const ResourceName = lazySchema(() => z
  .string()
  .min(1, 'name is required')
  .max(63, 'must be at most 63 characters')
  .regex(NAME_RULE, 'must be lowercase letters, digits and hyphens, start with a letter and end with a letter or digit'));

const DisplayName = lazySchema(() => printable(z.string().max(1024)));

const Quantity = lazySchema(() => z.string().refine((v) => parseBytes(v) !== undefined, 'not a valid quantity (use a binary size such as 16Mi or 1Gi)'));
const Duration = lazySchema(() => z.string().refine((v) => parseDuration(v) !== undefined, 'not a valid duration (use for example 24h, 30m or 1h30m; empty means none)'));
const Discard = lazySchema(() => z.enum(['old', 'new']));

export const TopicStats = lazySchema(() => z.object({
  published: z.number(),
  delivered: z.number(),
  published_bytes: z.number(),
  delivered_bytes: z.number(),
  storage_bytes: z.number(),
  backlog_bytes: z.number(),
  subscriptions: z.number(),
  producers: z.number(),
}));

export const TopicView = lazySchema(() => z.object({
  name: z.string(),
  display_name: z.string().optional(),
  path: z.string(),
  max_bytes: z.string(),
  max_age: z.string().optional(),
  discard: Discard,
  address: z.string(),
  created_at: Timestamp,
  state: z.enum(['pending', 'ready', 'degraded', 'deleting']),
  ready: z.boolean(),
  message: z.string().optional(),
  stats: TopicStats,
}));
export type TopicView = z.infer<typeof TopicView>;

export const SubscriptionType = lazySchema(() => z.enum(['shared', 'key-shared', 'exclusive', 'failover']));
export const ContentMode = lazySchema(() => z.enum(['cloudevents-structured', 'cloudevents-binary']));

export const SubscriptionView = lazySchema(() => z.object({
  name: z.string(),
  display_name: z.string().optional(),
  path: z.string(),
  topic: z.string(),
  type: SubscriptionType,
  active_type: SubscriptionType.optional(),
  ack_deadline_seconds: z.number(),
  max_deliver: z.number(),
  start_from: z.enum(['all', 'new']),
  max_ack_pending: z.number(),
  deliver: z.object({
    mode: z.enum(['pull', 'push']),
    push: z.object({ url: z.string(), content_mode: ContentMode }).optional(),
  }),
  dead_letter: z.object({ topic: z.string(), after_attempts: z.number() }).optional(),
  address: z.string(),
  created_at: Timestamp,
  state: z.enum(['pending', 'ready', 'degraded', 'deleting']),
  ready: z.boolean(),
  message: z.string().optional(),
  stats: z.object({
    backlog: z.number(),
    unacknowledged: z.number(),
    delivered: z.number(),
    consumers: z.number(),
    redeliver_rate: z.number(),
    oldest_unacked_age_seconds: z
      .number()
      .optional()
      .describe("age of the oldest message not yet acknowledged (Pub/Sub's oldest_unacked_message_age); absent when none waits"),
  }),
}));
export type SubscriptionView = z.infer<typeof SubscriptionView>;

export const PulledMessage = lazySchema(() => z.object({
  ack_id: z.string().optional(),
  id: z.string(),
  data: z.string(),
  attributes: z.record(z.string(), z.string()),
  key: z.string().optional(),
  publish_time: Timestamp,
  delivery_attempt: z.number(),
}));
export type PulledMessage = z.infer<typeof PulledMessage>;

const Deleting = lazySchema(() => z.object({ name: z.string(), state: z.literal('deleting'), ready: z.literal(false) }));

export const TopicParams = lazySchema(() => ProjectParams.extend({ topic: z.string() }));
export const SubscriptionParams = lazySchema(() => TopicParams.extend({ sub: z.string() }));

export const TopicCreate = lazySchema(() => z.strictObject({
  name: ResourceName,
  display_name: DisplayName.optional(),
  max_bytes: Quantity.optional(),
  max_age: Duration.optional(),
  discard: Discard.optional(),
}));
export const TopicPatch = lazySchema(() => z.strictObject({
  name: z.unknown().optional(),
  display_name: DisplayName.optional(),
  max_bytes: Quantity.optional(),
  max_age: Duration.optional(),
  discard: Discard.optional(),
}));

const Int = lazySchema(() => z.number().int('must be an integer'));
const DeliverInput = lazySchema(() => z.strictObject({
  mode: z.enum(['pull', 'push']).optional(),
  push: z.strictObject({ url: z.string(), content_mode: ContentMode.optional() }).optional(),
}));
const DeadLetterInput = lazySchema(() => z.strictObject({
  topic: z.string().optional(),
  after_attempts: Int.min(1, 'must be at least 1').max(1000, 'must be at most 1000').optional(),
}));

export const SubscriptionCreate = lazySchema(() => z.strictObject({
  name: ResourceName,
  display_name: DisplayName.optional(),
  type: SubscriptionType.optional(),
  ack_deadline_seconds: Int.min(1, 'ack deadline must be between 1 and 600 seconds').max(600, 'ack deadline must be between 1 and 600 seconds').optional(),
  max_deliver: Int.min(0, 'max_deliver must not be negative').optional(),
  start_from: z.enum(['all', 'new']).optional(),
  max_ack_pending: Int.min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000').optional(),
  deliver: DeliverInput.optional(),
  dead_letter: DeadLetterInput.optional(),
}));
export const SubscriptionPatch = lazySchema(() => z.strictObject({
  name: z.unknown().optional(),
  topic: z.unknown().optional(),
  type: z.unknown().optional(),
  start_from: z.unknown().optional(),
  display_name: DisplayName.optional(),
  ack_deadline_seconds: Int.min(1, 'ack deadline must be between 1 and 600 seconds').max(600, 'ack deadline must be between 1 and 600 seconds').optional(),
  max_deliver: Int.min(0, 'max_deliver must not be negative').optional(),
  max_ack_pending: Int.min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000').optional(),
  deliver: DeliverInput.optional(),
  dead_letter: DeadLetterInput.optional(),
}));


export const PublishMessage = lazySchema(() => z
  .strictObject({
    text: z.string().optional(),
    data: z.string().refine(isStrictBase64, 'data is not valid base64 (standard alphabet with = padding, RFC 4648)').optional(),
    attributes: z
      .record(z.string(), z.string())
      .superRefine((rec, ctx) => {
        for (const k of Object.keys(rec)) {
          if (k === '' || printableTextProblem(k)) {
            ctx.addIssue({ code: 'custom', message: `bad attribute name ${JSON.stringify(k)}: names must be non-empty, on a single line and without control characters` });
          }
        }
      })
      .optional(),
    key: printable(z.string().max(1024)).optional(),
  })
  .refine((m) => !(m.text && m.data), 'set either text or data, not both'));
export type PublishMessage = z.infer<typeof PublishMessage>;

export const PublishBody = lazySchema(() => z.strictObject({
  messages: z
    .array(PublishMessage, { error: 'messages is required' })
    .min(1, 'no messages: send between 1 and 100')
    .max(MAX_PUBLISH_MESSAGES, `more than ${MAX_PUBLISH_MESSAGES} messages in one publish`),
}));

export const PullBody = lazySchema(() => z.strictObject({
  max_messages: Int.min(1, 'must be at least 1').optional(),
  timeout_ms: Int.min(0, 'must not be negative').optional(),
  auto_ack: z.boolean().optional(),
}));

export const AckBody = lazySchema(() => z.strictObject({
  ack_ids: z
    .array(z.string(), { error: 'ack_ids is required' })
    .min(1, 'ack_ids is empty: send between 1 and 1000')
    .max(MAX_ACK_IDS, `more than ${MAX_ACK_IDS} ack_ids in one request`),
}));

/** A topic's counters in the usage view: its stats without producers, by name. */
const UsageRow = lazySchema(() => z.object({ name: z.string(), ...TopicStats.omit({ producers: true }).shape }));


const base = '/v1/projects/{projectID}/topics';
const subBase = `${base}/{topic}/subscriptions`;

export const messagingRoutes = withProjectIdRule('uuid-404', {
  health: route({
    id: 'pubsub.health',
    method: 'GET',
    path: '/v1/pubsub/healthz',
    summary: 'Messaging health: status and dependencies',
    auth: 'none',
    unlimited: true,
    status: 200,
    response: lazySchema(() => z.object({
      status: z.enum(['ok', 'degraded']),
      dependencies: z.object({ orchestration: HealthDependency, database: HealthDependency, broker: HealthDependency, 'session-key': HealthDependency }),
    })),
  }),
  listTopics: route({
    id: 'topics.list',
    method: 'GET',
    path: base,
    summary: 'List topics',
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ topics: z.array(TopicView), next_page_token: z.string().optional() })),
  }),
  createTopic: route({
    id: 'topics.create',
    method: 'POST',
    path: base,
    summary: 'Create a topic (admin)',
    auth: 'any',
    params: ProjectParams,
    body: TopicCreate,
    bodyLimit: MESSAGING_BODY_LIMIT,
    status: 201,
    response: TopicView,
  }),
  getTopic: route({
    id: 'topics.get',
    method: 'GET',
    path: `${base}/{topic}`,
    summary: 'One topic',
    auth: 'any',
    params: TopicParams,
    status: 200,
    response: TopicView,
  }),
  patchTopic: route({
    id: 'topics.patch',
    method: 'PATCH',
    path: `${base}/{topic}`,
    summary: 'Edit a topic (admin); omitted fields keep their value',
    auth: 'any',
    params: TopicParams,
    body: TopicPatch,
    bodyLimit: MESSAGING_BODY_LIMIT,
    status: 200,
    response: TopicView,
  }),
  deleteTopic: route({
    id: 'topics.delete',
    method: 'DELETE',
    path: `${base}/{topic}`,
    summary: 'Delete a topic and its subscriptions (admin)',
    auth: 'any',
    params: TopicParams,
    status: 202,
    response: Deleting,
  }),
  publish: route({
    id: 'topics.publish',
    method: 'POST',
    path: `${base}/{topic}:publish`,
    summary: 'Publish 1 to 100 messages',
    auth: 'any',
    params: TopicParams,
    body: PublishBody,
    bodyLimit: PUBLISH_BODY_LIMIT,
    status: 200,
    response: lazySchema(() => z.object({
      message_ids: z.array(z.string()),
      error: z.string().optional(),
      published: z.number().optional(),
      requested: z.number().optional(),
    })),
  }),
  listSubscriptions: route({
    id: 'subscriptions.list',
    method: 'GET',
    path: subBase,
    summary: "List a topic's subscriptions",
    auth: 'any',
    params: TopicParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ subscriptions: z.array(SubscriptionView), next_page_token: z.string().optional() })),
  }),
  createSubscription: route({
    id: 'subscriptions.create',
    method: 'POST',
    path: subBase,
    summary: 'Create a subscription (admin)',
    auth: 'any',
    params: TopicParams,
    body: SubscriptionCreate,
    bodyLimit: MESSAGING_BODY_LIMIT,
    status: 201,
    response: SubscriptionView,
  }),
  getSubscription: route({
    id: 'subscriptions.get',
    method: 'GET',
    path: `${subBase}/{sub}`,
    summary: 'One subscription',
    auth: 'any',
    params: SubscriptionParams,
    status: 200,
    response: SubscriptionView,
  }),
  patchSubscription: route({
    id: 'subscriptions.patch',
    method: 'PATCH',
    path: `${subBase}/{sub}`,
    summary: 'Edit a subscription (admin)',
    auth: 'any',
    params: SubscriptionParams,
    body: SubscriptionPatch,
    bodyLimit: MESSAGING_BODY_LIMIT,
    status: 200,
    response: SubscriptionView,
  }),
  deleteSubscription: route({
    id: 'subscriptions.delete',
    method: 'DELETE',
    path: `${subBase}/{sub}`,
    summary: 'Delete a subscription (admin)',
    auth: 'any',
    params: SubscriptionParams,
    status: 202,
    response: Deleting,
  }),
  pull: route({
    id: 'subscriptions.pull',
    method: 'POST',
    path: `${subBase}/{sub}:pull`,
    summary: 'Pull messages (long poll)',
    auth: 'any',
    params: SubscriptionParams,
    body: PullBody,
    bodyLimit: MESSAGING_BODY_LIMIT,
    status: 200,
    response: lazySchema(() => z.object({ messages: z.array(PulledMessage), acknowledged: z.number().optional(), error: z.string().optional() })),
  }),
  acknowledge: route({
    id: 'subscriptions.acknowledge',
    method: 'POST',
    path: `${subBase}/{sub}:acknowledge`,
    summary: 'Acknowledge messages',
    auth: 'any',
    params: SubscriptionParams,
    body: AckBody,
    bodyLimit: MESSAGING_BODY_LIMIT,
    status: 200,
    response: lazySchema(() => z.object({ acknowledged: z.number() })),
  }),
  ack: route({
    id: 'subscriptions.ack',
    method: 'POST',
    path: `${subBase}/{sub}:ack`,
    summary: 'Acknowledge messages (alias of :acknowledge)',
    auth: 'any',
    params: SubscriptionParams,
    body: AckBody,
    bodyLimit: MESSAGING_BODY_LIMIT,
    status: 200,
    response: lazySchema(() => z.object({ acknowledged: z.number() })),
  }),
  quota: route({
    id: 'pubsub.quota',
    method: 'GET',
    path: '/v1/projects/{projectID}/pubsub/quota',
    summary: 'Pub/Sub storage budget',
    auth: 'any',
    params: ProjectParams,
    status: 200,
    response: lazySchema(() => z.object({
      limit_bytes: z.number(),
      allocated_bytes: z.number(),
      backlog_bytes: z.number(),
      storage_bytes: z.number(),
      available_bytes: z.number(),
      human: z.string(),
      topics: z.number(),
      provisioned: z.boolean(),
    })),
  }),
  usage: route({
    id: 'pubsub.usage',
    method: 'GET',
    path: '/v1/projects/{projectID}/pubsub/usage',
    summary: 'Per-topic counters since the broker loaded each topic',
    auth: 'any',
    params: ProjectParams,
    status: 200,
    response: lazySchema(() => z.object({ project: z.string(), topics: z.array(UsageRow), totals: UsageRow, caveat: z.string() })),
  }),
  credentials: route({
    id: 'pubsub.credentials',
    method: 'GET',
    path: '/v1/projects/{projectID}/pubsub/credentials',
    summary: 'Direct broker credential (admin)',
    auth: 'any',
    params: ProjectParams,
    status: 200,
    response: lazySchema(() => z.object({
      service_url: z.string(),
      external_endpoint: z.string().optional(),
      external_service_url: z.string().optional(),
      reachable_scope: z.string().optional(),
      token: z.string(),
      topic_prefix: z.string(),
      note: z.string(),
    })),
  }),
});
