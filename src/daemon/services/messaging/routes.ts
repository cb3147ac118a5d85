import { messagingRoutes as R, MAX_PULL_MESSAGES, MAX_PULL_TIMEOUT_MS } from '../../../api/messaging.js';
import { messagingMetricsReader } from './metrics.js';
import type { Area, AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { badRequest, conflict } from '../../http/errors.js';
import { Reply, type RequestContext } from '../../http/router.js';
import { accessProject } from '../accounts/projects.js';
import { principalKey, type Principal } from '../auth/principal.js';
import { parseAckIds, acknowledge } from './ack.js';
import { Broker } from './broker.js';
import { messagingConsumers } from './consumers.js';
import { startCheckpointer, type Checkpointer } from '../../store/checkpointer.js';
import { messagingMigrations } from './migrations.js';
import { publishMessages } from './publish.js';
import { pull } from './pull.js';
import { PushWorker } from './push-worker.js';
import { createSubscription, deleteSubscription, findSub, patchSubscription, subscriptionView } from './subscriptions.js';
import { createTopic, deleteTopic, findTopic, patchTopic, topicView } from './topics.js';
import { credentialsView, healthView, quotaView, usageView } from './views.js';
import { namesIn } from '../search/names.js';

/** Header naming the consumer behind an HTTP pull (key-shared and failover assign by consumer). */
export const CONSUMER_HEADER = 'x-consumer-id';

/** SQLite page cache ceiling the broker asks of the daemon's connection, in KiB. */
const BROKER_CACHE_KIB = 64 * 1024;

const actor = (p: Principal | undefined, requestId: string) => ({ email: p?.email ?? 'anonymous', requestId });

/**
 * Who is pulling: the X-Consumer-Id header when given (one process can run several consumers),
 * else the credential (each person or key is one consumer), as a Pulsar consumer name would.
 */
function consumerId(ctx: RequestContext): string {
  const h = ctx.req.headers[CONSUMER_HEADER];
  const v = Array.isArray(h) ? h[0] : h;
  if (v === undefined) return principalKey(ctx.principal!);
  if (!/^[\x21-\x7e]{1,128}$/.test(v)) throw badRequest(`${CONSUMER_HEADER} must be 1 to 128 printable characters`);
  return `${principalKey(ctx.principal!)}/${v}`;
}

/**
 * Messaging (spec 3 §2.3, §2.4, §4.3, §6): topics, subscriptions, publish, pull, acknowledge, push.
 * A factory, because the area owns a live broker: each daemon (and each in-process test daemon)
 * gets its own.
 */
export function messagingArea(): Area {
  let broker: Broker | undefined;
  let checkpointer: Checkpointer | undefined;
  let checkpointsFrom: (() => void) | undefined;
  return {
    name: 'messaging',
    migrations: messagingMigrations,
    register(r, ctx: AreaContext) {
      const b = (broker = new Broker(ctx, (owner, subId) => new PushWorker(owner, subId)));
      ctx.hooks.messagingConsumers = messagingConsumers(b, ctx.hooks);
      ctx.hooks.searchables.push(namesIn(ctx.db, 'topic', 'msg_topics', "state <> 'deleting'"));
      ctx.hooks.metricsReaders.push(messagingMetricsReader(ctx));
      const member = (p: Principal | undefined, ref: string) => accessProject(ctx, p!, ref, 'member').project;
      const admin = (p: Principal | undefined, ref: string) => accessProject(ctx, p!, ref, 'resource-admin').project;

      ctx.hooks.projectDependents.push((projectId) => {
        const n = b.store.projectTopicCount(projectId);
        return n ? `${n} topic${n === 1 ? '' : 's'}` : undefined;
      });

      // The daemon's /healthz carries these too: spec 3 gives messaging GET /healthz at the base URL.
      ctx.hooks.healthDependencies.push(() => healthView(b).body.dependencies);
      r.handle(R.health, () => {
        const h = healthView(b);
        return h.ok ? h.body : new Reply(503, h.body);
      });

      // ---- topics ----
      r.handle(R.listTopics, ({ principal, params, query }) => {
        const project = member(principal, params.projectID);
        const page = ctx.pager.parse(query, `topics:${project.id}`);
        const rows = b.store.listTopics(project.id, page.offset, page.size + 1);
        const { items, next_page_token } = ctx.pager.slice(page, rows);
        return { topics: items.map((t) => topicView(b, t)), ...(next_page_token ? { next_page_token } : {}) };
      });
      r.handle(R.createTopic, ({ principal, params, body, requestId }) => {
        const created = createTopic(b, admin(principal, params.projectID).id, body, actor(principal, requestId));
        checkpointsFrom?.();
        return created;
      });
      r.handle(R.getTopic, ({ principal, params }) => topicView(b, findTopic(b, member(principal, params.projectID).id, params.topic)));
      r.handle(R.patchTopic, ({ principal, params, body, requestId }) =>
        patchTopic(b, admin(principal, params.projectID).id, params.topic, body, actor(principal, requestId)),
      );
      r.handle(R.deleteTopic, ({ principal, params, requestId }) =>
        deleteTopic(b, admin(principal, params.projectID).id, params.topic, actor(principal, requestId)),
      );
      r.handle(R.publish, ({ principal, params, body }) => {
        const project = member(principal, params.projectID);
        const topic = findTopic(b, project.id, params.topic);
        if (topic.state !== 'ready') throw conflict(`topic ${topic.name} is not ready (state ${topic.state}); retry shortly`);
        const messages = body.messages.map((m) => ({
          data: m.text ? Buffer.from(m.text, 'utf8') : m.data ? Buffer.from(m.data, 'base64') : Buffer.alloc(0),
          attributes: m.attributes ?? {},
          ...(m.key ? { key: m.key } : {}),
        }));
        const producer = principalKey(principal!);
        const producers = b.topicRuntime(topic.id);
        if (producers && !producers.producers.has(producer) && producers.liveProducers(b.clock.now(), b.config.consumerTtlMs) >= b.config.maxConsumersPerTopic) {
          throw conflict(`too many producers on topic ${topic.name} (limit ${b.config.maxConsumersPerTopic})`);
        }
        const res = publishMessages(b, topic, messages, producer);
        if (!res.error) return res;
        if (!res.message_ids.length) throw conflict(res.error);
        return new Reply(207, { message_ids: res.message_ids, error: res.error, published: res.message_ids.length, requested: messages.length });
      });

      // ---- subscriptions ----
      r.handle(R.listSubscriptions, ({ principal, params, query }) => {
        const topic = findTopic(b, member(principal, params.projectID).id, params.topic);
        const page = ctx.pager.parse(query, `subscriptions:${topic.id}`);
        const { items, next_page_token } = ctx.pager.slice(page, b.store.listSubs(topic.id, page.offset, page.size + 1));
        return { subscriptions: items.map((s) => subscriptionView(b, topic, s)), ...(next_page_token ? { next_page_token } : {}) };
      });
      r.handle(R.createSubscription, ({ principal, params, body, requestId }) => {
        const topic = findTopic(b, admin(principal, params.projectID).id, params.topic);
        return createSubscription(b, ctx.hooks, topic, body, actor(principal, requestId));
      });
      r.handle(R.getSubscription, ({ principal, params }) => {
        const topic = findTopic(b, member(principal, params.projectID).id, params.topic);
        return subscriptionView(b, topic, findSub(b, topic, params.sub));
      });
      r.handle(R.patchSubscription, ({ principal, params, body, requestId }) => {
        const topic = findTopic(b, admin(principal, params.projectID).id, params.topic);
        return patchSubscription(b, ctx.hooks, topic, params.sub, body, actor(principal, requestId));
      });
      r.handle(R.deleteSubscription, ({ principal, params, requestId }) => {
        const topic = findTopic(b, admin(principal, params.projectID).id, params.topic);
        return deleteSubscription(b, topic, params.sub, actor(principal, requestId));
      });

      r.handle(R.pull, async (input) => {
        const { principal, params, body, res } = input;
        const topic = findTopic(b, member(principal, params.projectID).id, params.topic);
        const sub = findSub(b, topic, params.sub);
        if (sub.deliver_mode === 'push') throw conflict('this is a push subscription: create a separate pull subscription to pull');
        if (sub.type === 'exclusive') throw conflict('ordered exclusive subscriptions cannot be pulled through this API (use push or a direct client)');
        if (sub.state !== 'ready') throw conflict(`subscription ${sub.name} is not ready (state ${sub.state}); retry shortly`);
        const consumer = consumerId(input);
        const rt = b.subRuntime(sub.id);
        if (!rt.consumers.has(consumer) && rt.liveConsumers(b.clock.now(), b.config.consumerTtlMs) >= b.config.maxConsumersPerTopic) {
          throw conflict(`too many consumers on subscription ${sub.name} (limit ${b.config.maxConsumersPerTopic})`);
        }
        let aborted = false;
        res.once('close', () => {
          if (!res.writableFinished) {
            aborted = true;
            b.wake(sub.id);
          }
        });
        const out = await pull(b, sub, {
          max: Math.min(body.max_messages ?? 10, MAX_PULL_MESSAGES),
          timeoutMs: Math.min(body.timeout_ms ?? 2000, MAX_PULL_TIMEOUT_MS),
          autoAck: body.auto_ack ?? false,
          consumer,
          aborted: () => aborted,
        });
        return out.error ? new Reply(207, out) : out;
      });
      const ack = ({ principal, params, body }: { principal?: Principal; params: { projectID: string; topic: string; sub: string }; body: { ack_ids: string[] } }) => {
        const topic = findTopic(b, member(principal, params.projectID).id, params.topic);
        const sub = findSub(b, topic, params.sub);
        return { acknowledged: acknowledge(b, sub, parseAckIds(sub, body.ack_ids)) };
      };
      r.handle(R.acknowledge, ack);
      r.handle(R.ack, ack);

      // ---- project views ----
      r.handle(R.quota, ({ principal, params }) => quotaView(b, member(principal, params.projectID)));
      r.handle(R.usage, ({ principal, params }) => usageView(b, member(principal, params.projectID)));
      r.handle(R.credentials, async ({ principal, params, requestId }) => {
        const project = admin(principal, params.projectID);
        const view = await credentialsView(b, project);
        writeAudit(ctx.db, ctx.clock, { projectId: project.id, actor: principal!.email, action: 'pubsub.credentials.issue', requestId });
        return view;
      });
    },
    async start(ctx) {
      // The broker's working set (the right edge of the message B-trees and the pending rows of a
      // backlog) outgrows SQLite's default 2 MB page cache under load; misses re-read pages from
      // the WAL. A ceiling, not an allocation: pages are cached as they are touched.
      if ((ctx.db.pragma('cache_size', { simple: true }) as number) > -BROKER_CACHE_KIB) ctx.db.pragma(`cache_size = -${BROKER_CACHE_KIB}`);
      // The broker commits on every publish, pull and ack: keep WAL checkpoints out of those commits.
      // Started with the first topic (at start when topics exist), so a daemon without topics (most
      // test daemons) does not pay for a worker thread.
      checkpointsFrom = () => {
        checkpointsFrom = undefined;
        checkpointer = startCheckpointer(ctx.db, {
          intervalMs: ctx.config.messaging.walCheckpointMs,
          onError: (message) => ctx.log.warn('messaging: WAL checkpoint worker failed', { error: message }),
        });
      };
      broker?.start();
      if (broker?.store.allTopics().length) checkpointsFrom();
    },
    async stop() {
      await broker?.stop();
      checkpointsFrom = undefined;
      await checkpointer?.stop();
      checkpointer = undefined;
    },
  };
}
