import type { Hooks, MessagingConsumersHook } from '../../area.js';
import { conflict, notFound } from '../../http/errors.js';
import type { Broker } from './broker.js';
import { buildPushRequest } from './cloudevents.js';
import { createSubscription, deleteSubscription, patchSubscription } from './subscriptions.js';

/** The actor written in the audit log when an area creates or deletes a subscription for itself. */
const SYSTEM = { email: 'platform-triggers', requestId: '' };

/**
 * Lets another area (pubsub triggers) consume a pull subscription through the broker: the push
 * worker leases, acknowledges after a successful send, backs off and redelivers after a failed one
 * and dead-letters as the subscription says (dead-letter.ts), exactly as for a push subscription;
 * only the sending is the consumer's. Each message reaches the consumer as the binary-mode
 * CloudEvent a push subscription would send (cloudevents.ts).
 */
export function messagingConsumers(b: Broker, hooks: Hooks): MessagingConsumersHook {
  const topicOf = (projectId: string, name: string) => {
    const t = b.store.topic(projectId, name);
    if (!t || t.state === 'deleting') throw notFound(`topic ${name} not found`);
    return t;
  };
  return {
    prepare(projectId, topicName, subscription, ownName, maxDeliver) {
      const t = topicOf(projectId, topicName);
      if (subscription !== undefined) {
        const s = b.store.sub(t.id, subscription);
        if (!s || s.state === 'deleting') throw notFound(`subscription ${subscription} not found on topic ${topicName}`);
        if (s.deliver_mode === 'push') throw conflict(`subscription ${subscription} is a push subscription: a trigger consumes a pull subscription (or omit it to get one of its own)`);
        if (s.type === 'exclusive') throw conflict(`subscription ${subscription} is exclusive: a trigger consumes a shared, failover or key-shared pull subscription`);
        return { subscription, created: false };
      }
      if (b.store.sub(t.id, ownName)) throw conflict(`subscription ${ownName} already exists on topic ${topicName}: name one with source.pubsub.subscription, or delete it`);
      createSubscription(b, hooks, t, { name: ownName, start_from: 'new', max_deliver: maxDeliver, ack_deadline_seconds: 60 }, SYSTEM);
      return { subscription: ownName, created: true };
    },
    attach(projectId, topicName, subscription, send, backoffMs, settled) {
      const t = b.store.topic(projectId, topicName);
      const s = t ? b.store.sub(t.id, subscription) : undefined;
      if (!t || !s) return () => undefined;
      return b.attachConsumer(s.id, {
        send: (sub, topic, d, signal) =>
          send({ id: `${d.message.ledger}:${d.message.entry}`, attempt: d.attempt, publishTime: d.message.publish_time, deadlineMs: sub.ack_deadline_seconds * 1000, ...buildPushRequest({ ...sub, content_mode: 'cloudevents-binary' }, topic, d.message, d.attempt) }, signal),
        backoffMs,
        settled: (d, result, error) => settled(`${d.message.ledger}:${d.message.entry}`, result, error),
      });
    },
    setMaxDeliver(projectId, topicName, subscription, maxDeliver) {
      const t = b.store.topic(projectId, topicName);
      const s = t ? b.store.sub(t.id, subscription) : undefined;
      if (t && s && s.state !== 'deleting' && s.max_deliver !== maxDeliver) patchSubscription(b, hooks, t, subscription, { max_deliver: maxDeliver }, SYSTEM);
    },
    remove(projectId, topicName, subscription) {
      const t = b.store.topic(projectId, topicName);
      const s = t ? b.store.sub(t.id, subscription) : undefined;
      if (t && s && s.state !== 'deleting') deleteSubscription(b, t, subscription, SYSTEM);
    },
  };
}
