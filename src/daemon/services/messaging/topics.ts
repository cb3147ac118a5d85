import type { z } from 'zod';
import type { TopicCreate, TopicPatch, TopicView } from '../../../api/messaging.js';
import { formatBytes, formatDuration, humanBytes, parseBytes, parseDuration } from '../../../api/quantity.js';
import { writeAudit } from '../../audit.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { tx } from '../../store/db.js';
import type { Broker } from './broker.js';
import { topicAddress, topicPath } from './paths.js';
import { dropOldest } from './retention.js';
import type { TopicRow } from './store.js';

export const DEFAULT_MAX_BYTES = 16 * 1024 ** 2;

export interface Actor {
  email: string;
  requestId: string;
}

/** A topic's counters since the broker loaded it, shared by the topic view and the usage view. */
export function topicCounters(b: Broker, t: TopicRow) {
  const rt = b.topicRuntime(t.id);
  return {
    published: rt?.published ?? 0,
    delivered: rt?.delivered ?? 0,
    published_bytes: rt?.publishedBytes ?? 0,
    delivered_bytes: rt?.deliveredBytes ?? 0,
    storage_bytes: t.storage_bytes,
    backlog_bytes: b.store.topicBacklogBytes(t.id),
    subscriptions: b.store.subCount(t.id),
  };
}

/** Topic view of spec 3 §2.3; stats counters come from the broker's in-memory load of the topic. */
export function topicView(b: Broker, t: TopicRow): TopicView {
  const rt = b.topicRuntime(t.id);
  const now = b.clock.now();
  return {
    name: t.name,
    ...(t.display_name ? { display_name: t.display_name } : {}),
    path: topicPath(t.short, t.name),
    max_bytes: formatBytes(t.max_bytes),
    ...(t.max_age_ms ? { max_age: formatDuration(t.max_age_ms) } : {}),
    discard: t.discard,
    address: topicAddress(t.short, t.name),
    created_at: t.created_at,
    state: t.state,
    ready: t.state === 'ready',
    ...(t.state !== 'ready' ? { message: t.message || stateMessage(t.state) } : {}),
    stats: { ...topicCounters(b, t), producers: rt?.liveProducers(now, b.config.consumerTtlMs) ?? 0 },
  };
}

export function stateMessage(state: string): string {
  if (state === 'pending') return 'the broker is loading it; retry in a moment';
  if (state === 'deleting') return 'being deleted';
  return state;
}

/** Looks a topic up by name; a malformed or absent name is the same 404. */
export function findTopic(b: Broker, projectId: string, name: string): TopicRow {
  const t = b.store.topic(projectId, name);
  if (!t) throw notFound(`topic ${name} not found`);
  return t;
}

/**
 * The project budget (spec 3 §8): every topic claims its max_bytes at creation. `delta` is the
 * extra claim (a new topic's max_bytes, or the raise of an existing one).
 */
function checkBudget(b: Broker, projectId: string, delta: number, newTopic: boolean): void {
  const { allocated, topics } = b.store.claim(projectId);
  const budget = b.config.projectBudgetBytes;
  if (newTopic && topics >= b.config.maxTopicsPerProject) {
    throw conflict(`topic limit reached: ${topics} topics of ${b.config.maxTopicsPerProject} allowed per project`);
  }
  if (delta > 0 && allocated + delta > budget) {
    throw conflict(
      `pub/sub storage budget exceeded: budget ${formatBytes(budget)}, already claimed ${humanBytes(allocated)} by ${topics} topic${topics === 1 ? '' : 's'}, ` +
        `this change claims ${humanBytes(delta)} more (${humanBytes(Math.max(0, budget - allocated))} available)`,
    );
  }
}

export function createTopic(b: Broker, projectId: string, body: z.infer<typeof TopicCreate>, actor: Actor): TopicView {
  const maxBytes = body.max_bytes !== undefined ? parseBytes(body.max_bytes)! : DEFAULT_MAX_BYTES;
  const maxAge = body.max_age !== undefined ? parseDuration(body.max_age)! : 0;
  const id = tx(b.store.db, () => {
    if (b.store.topic(projectId, body.name)) throw conflict(`topic ${body.name} already exists`);
    checkBudget(b, projectId, maxBytes, true);
    const id = b.store.insertTopic({
      project_id: projectId,
      name: body.name,
      display_name: body.display_name ?? '',
      max_bytes: maxBytes,
      max_age_ms: maxAge,
      discard: body.discard ?? 'old',
      state: 'pending',
      created_at: new Date(b.clock.now()).toISOString(),
    });
    writeAudit(b.store.db, b.clock, { projectId, actor: actor.email, action: 'pubsub.topic.create', target: body.name, requestId: actor.requestId });
    return id;
  });
  b.converge('topic', id);
  return topicView(b, b.store.topicById(id)!);
}

export function patchTopic(b: Broker, projectId: string, name: string, body: z.infer<typeof TopicPatch>, actor: Actor): TopicView {
  if (body.name !== undefined) throw badRequest('name is immutable; create a new topic to change it');
  const t = tx(b.store.db, () => {
    const t = findTopic(b, projectId, name);
    if (t.state === 'deleting') throw conflict(`topic ${name} is being deleted`);
    const maxBytes = body.max_bytes !== undefined ? parseBytes(body.max_bytes)! : t.max_bytes;
    // Raising re-checks the budget for the difference only (spec 3 §4.3).
    if (maxBytes > t.max_bytes) checkBudget(b, projectId, maxBytes - t.max_bytes, false);
    const next = {
      display_name: body.display_name ?? t.display_name,
      max_bytes: maxBytes,
      max_age_ms: body.max_age !== undefined ? parseDuration(body.max_age)! : t.max_age_ms,
      discard: body.discard ?? t.discard,
    };
    b.store.updateTopic(t.id, next);
    // A lowered cap on a discard-old topic takes effect now rather than at the next publish.
    if (next.discard === 'old' && t.storage_bytes > next.max_bytes) {
      b.store.addStorage(t.id, -dropOldest(b.store, t.id, t.storage_bytes - next.max_bytes));
    }
    writeAudit(b.store.db, b.clock, { projectId, actor: actor.email, action: 'pubsub.topic.update', target: name, details: body, requestId: actor.requestId });
    return t;
  });
  if (body.max_age !== undefined) b.sweepNow();
  return topicView(b, b.store.topicById(t.id)!);
}

export function deleteTopic(b: Broker, projectId: string, name: string, actor: Actor) {
  const t = tx(b.store.db, () => {
    const t = findTopic(b, projectId, name);
    b.store.setTopicState(t.id, 'deleting');
    for (const s of b.store.listSubs(t.id, 0, 1_000_000)) b.store.setSubState(s.id, 'deleting');
    writeAudit(b.store.db, b.clock, { projectId, actor: actor.email, action: 'pubsub.topic.delete', target: name, requestId: actor.requestId });
    return t;
  });
  b.scheduleTopicDelete(t.id);
  return { name, state: 'deleting' as const, ready: false as const };
}
