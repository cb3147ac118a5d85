import type { z } from 'zod';
import type { SubscriptionCreate, SubscriptionPatch, SubscriptionView } from '../../../api/messaging.js';
import type { Hooks } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { tx } from '../../store/db.js';
import type { Broker } from './broker.js';
import { subscriptionAddress, subscriptionPath } from './paths.js';
import { checkPushUrl } from './push-url.js';
import type { SubRow, TopicRow } from './store.js';
import { stateMessage, type Actor } from './topics.js';

export const SUB_DEFAULTS = { type: 'shared', ack_deadline_seconds: 30, max_deliver: 5, start_from: 'all', max_ack_pending: 1000, after_attempts: 5 } as const;

export function subscriptionView(b: Broker, t: TopicRow, s: SubRow): SubscriptionView {
  const now = b.clock.now();
  const rt = b.peekSubRuntime(s.id);
  const { backlog, unacked, oldestPublish } = b.store.subStats(s.id, now);
  return {
    name: s.name,
    ...(s.display_name ? { display_name: s.display_name } : {}),
    path: subscriptionPath(t.short, t.name, s.name),
    topic: t.name,
    type: s.type,
    ...(rt?.activeType ? { active_type: rt.activeType } : {}),
    ack_deadline_seconds: s.ack_deadline_seconds,
    max_deliver: s.max_deliver,
    start_from: s.start_from,
    max_ack_pending: s.max_ack_pending,
    deliver:
      s.deliver_mode === 'push'
        ? { mode: 'push', push: { url: s.push_url!, content_mode: s.content_mode ?? 'cloudevents-structured' } }
        : { mode: 'pull' },
    ...(s.dl_topic ? { dead_letter: { topic: s.dl_topic, after_attempts: s.dl_after ?? SUB_DEFAULTS.after_attempts } } : {}),
    address: subscriptionAddress(t.short, t.name, s.name),
    created_at: s.created_at,
    state: s.state,
    ready: s.state === 'ready',
    ...(s.state !== 'ready' ? { message: s.message || stateMessage(s.state) } : {}),
    stats: {
      backlog,
      unacknowledged: unacked,
      delivered: rt?.delivered ?? 0,
      consumers: rt?.liveConsumers(now, b.config.consumerTtlMs) ?? 0,
      redeliver_rate: rt?.redeliverRate(now) ?? 0,
      ...(oldestPublish !== undefined ? { oldest_unacked_age_seconds: Math.max(0, Math.floor((now - oldestPublish) / 1000)) } : {}),
    },
  };
}

export function findSub(b: Broker, t: TopicRow, name: string): SubRow {
  const s = b.store.sub(t.id, name);
  if (!s) throw notFound(`subscription ${name} not found on topic ${t.name}`);
  return s;
}

type Deliver = NonNullable<z.infer<typeof SubscriptionCreate>['deliver']>;
type DeadLetter = NonNullable<z.infer<typeof SubscriptionCreate>['dead_letter']>;

/** Resolves deliver into columns, applying the rules of the create table (spec 3 §4.3). */
function resolveDeliver(
  b: Broker,
  hooks: Hooks,
  t: TopicRow,
  deliver: Deliver | undefined,
  current?: SubRow,
): Pick<SubRow, 'deliver_mode' | 'push_url' | 'content_mode'> {
  if (!deliver) {
    return current
      ? { deliver_mode: current.deliver_mode, push_url: current.push_url, content_mode: current.content_mode }
      : { deliver_mode: 'pull', push_url: null, content_mode: null };
  }
  const mode = deliver.mode ?? (deliver.push ? 'push' : 'pull');
  if (mode === 'pull') {
    if (deliver.push) throw badRequest('deliver.push is set while deliver.mode is pull: remove deliver.push or set mode push');
    return { deliver_mode: 'pull', push_url: null, content_mode: null };
  }
  if (!deliver.push?.url) throw badRequest('deliver.push.url is required when deliver.mode is push');
  const url = checkPushUrl(deliver.push.url, { id: t.project_id, short: t.short }, b.config, hooks);
  return { deliver_mode: 'push', push_url: url, content_mode: deliver.push.content_mode ?? 'cloudevents-structured' };
}

function resolveDeadLetter(b: Broker, t: TopicRow, dl: DeadLetter | undefined, current?: SubRow): Pick<SubRow, 'dl_topic' | 'dl_after'> {
  if (!dl) return current ? { dl_topic: current.dl_topic, dl_after: current.dl_after } : { dl_topic: null, dl_after: null };
  // An empty topic clears the dead-letter policy (spec 3 §4.3 patch rule).
  if (dl.topic === undefined || dl.topic === '') {
    if (dl.topic === '' || !current?.dl_topic) return { dl_topic: null, dl_after: null };
    return { dl_topic: current.dl_topic, dl_after: dl.after_attempts ?? current.dl_after };
  }
  if (dl.topic === t.name) throw badRequest('dead_letter.topic must differ from the subscription\'s own topic');
  const target = b.store.topic(t.project_id, dl.topic);
  if (!target || target.state === 'deleting') throw badRequest(`dead_letter.topic ${dl.topic} does not exist in this project`);
  return { dl_topic: dl.topic, dl_after: dl.after_attempts ?? SUB_DEFAULTS.after_attempts };
}

export function createSubscription(b: Broker, hooks: Hooks, t: TopicRow, body: z.infer<typeof SubscriptionCreate>, actor: Actor): SubscriptionView {
  if (t.state === 'deleting') throw conflict(`topic ${t.name} is being deleted`);
  const type = body.type ?? SUB_DEFAULTS.type;
  const deliver = resolveDeliver(b, hooks, t, body.deliver);
  if (type === 'exclusive' && deliver.deliver_mode === 'pull') {
    throw badRequest('exclusive type cannot be read through this API (use push or a direct client)');
  }
  const id = tx(b.store.db, () => {
    if (b.store.sub(t.id, body.name)) throw conflict(`subscription ${body.name} already exists on topic ${t.name}`);
    const dl = resolveDeadLetter(b, t, body.dead_letter);
    const startFrom = body.start_from ?? SUB_DEFAULTS.start_from;
    const id = b.store.insertSub({
      topic_id: t.id,
      project_id: t.project_id,
      name: body.name,
      display_name: body.display_name ?? '',
      type,
      ack_deadline_seconds: body.ack_deadline_seconds ?? SUB_DEFAULTS.ack_deadline_seconds,
      // 0 is read as unset (spec 3 §4.3): the default applies.
      max_deliver: body.max_deliver || SUB_DEFAULTS.max_deliver,
      start_from: startFrom,
      max_ack_pending: body.max_ack_pending ?? SUB_DEFAULTS.max_ack_pending,
      ...deliver,
      ...dl,
      state: 'pending',
      created_at: new Date(b.clock.now()).toISOString(),
    });
    // start_from all: the cursor starts at the earliest message the topic still retains.
    if (startFrom === 'all') b.store.seedPending(id, t.id);
    writeAudit(b.store.db, b.clock, { projectId: t.project_id, actor: actor.email, action: 'pubsub.subscription.create', target: `${t.name}/${body.name}`, requestId: actor.requestId });
    return id;
  });
  b.converge('sub', id);
  return subscriptionView(b, t, b.store.subById(id)!);
}

const IMMUTABLE = ['name', 'topic', 'type', 'start_from'] as const;

export function patchSubscription(b: Broker, hooks: Hooks, t: TopicRow, name: string, body: z.infer<typeof SubscriptionPatch>, actor: Actor): SubscriptionView {
  for (const f of IMMUTABLE) {
    if (body[f] !== undefined) throw badRequest(`${f} is immutable; recreate the subscription to change it`);
  }
  const s = tx(b.store.db, () => {
    const s = findSub(b, t, name);
    if (s.state === 'deleting') throw conflict(`subscription ${name} is being deleted`);
    const deliver = resolveDeliver(b, hooks, t, body.deliver, s);
    if (s.type === 'exclusive' && deliver.deliver_mode === 'pull') {
      throw badRequest('exclusive type cannot be read through this API (use push or a direct client)');
    }
    b.store.updateSub(s.id, {
      display_name: body.display_name ?? s.display_name,
      ack_deadline_seconds: body.ack_deadline_seconds ?? s.ack_deadline_seconds,
      max_deliver: body.max_deliver === undefined ? s.max_deliver : body.max_deliver || SUB_DEFAULTS.max_deliver,
      max_ack_pending: body.max_ack_pending ?? s.max_ack_pending,
      ...deliver,
      ...resolveDeadLetter(b, t, body.dead_letter, s),
    });
    writeAudit(b.store.db, b.clock, { projectId: t.project_id, actor: actor.email, action: 'pubsub.subscription.update', target: `${t.name}/${name}`, details: body, requestId: actor.requestId });
    return s;
  });
  const fresh = b.store.subById(s.id)!;
  b.syncWorker(fresh);
  b.wake(s.id);
  return subscriptionView(b, t, fresh);
}

export function deleteSubscription(b: Broker, t: TopicRow, name: string, actor: Actor) {
  const s = tx(b.store.db, () => {
    const s = findSub(b, t, name);
    b.store.setSubState(s.id, 'deleting');
    writeAudit(b.store.db, b.clock, { projectId: t.project_id, actor: actor.email, action: 'pubsub.subscription.delete', target: `${t.name}/${name}`, requestId: actor.requestId });
    return s;
  });
  b.scheduleSubDelete(s.id);
  return { name, state: 'deleting' as const, ready: false as const };
}
