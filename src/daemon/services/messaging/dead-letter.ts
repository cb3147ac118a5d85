import { tx } from '../../store/db.js';
import type { Broker } from './broker.js';
import type { Delivery } from './pull.js';
import type { SubRow, TopicRow } from './store.js';
import { publishMessages } from './publish.js';
import { acknowledge } from './ack.js';

export const DEAD_LETTER_PREFIX = 'cai-dead-letter-';

export type FailureOutcome = 'retry' | 'dead-lettered' | 'dropped';

/** Backoff before attempt n+1 after n failed attempts: base, doubling, capped (spec 3 §6). */
export function backoffMs(failedAttempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failedAttempts - 1));
}

/**
 * A failed push attempt. Below the limit the message backs off and is retried. At the limit it
 * is republished to the dead-letter topic with forensic cai-dead-letter-* attributes (in the same
 * transaction as its acknowledgement, so it is parked exactly once) or dropped when no
 * dead-letter topic is set. The limit is dead_letter.after_attempts when a dead-letter topic is
 * set, else max_deliver (0: unset, retried forever). If the dead-letter topic cannot take the
 * message (absent, not ready, full) the message keeps retrying rather than being lost.
 */
export function pushFailed(
  b: Broker,
  sub: SubRow,
  topic: TopicRow,
  d: Delivery,
  error: string,
  opts: { permanent?: boolean; backoffMs?: (failedAttempts: number) => number } = {},
): FailureOutcome {
  const now = b.clock.now();
  const limit = sub.dl_topic ? (sub.dl_after ?? 5) : sub.max_deliver;
  const seq = d.message.seq;
  // A permanent failure (a consumer's 4xx) goes where the last attempt would go, at once.
  if (opts.permanent || (limit > 0 && d.attempt >= limit)) {
    if (!sub.dl_topic) {
      acknowledge(b, sub, [seq]);
      b.log.warn('messaging: push message dropped after max_deliver attempts', { subscription: sub.name, id: msgId(d), error });
      return 'dropped';
    }
    const dl = b.store.topic(sub.project_id, sub.dl_topic);
    if (dl && dl.state === 'ready') {
      const row = b.store.pending(sub.id, seq);
      const parked = tx(b.store.db, () => {
        const attributes = {
          ...(d.message.attributes ? (JSON.parse(d.message.attributes) as Record<string, string>) : {}),
          [`${DEAD_LETTER_PREFIX}source-topic`]: topic.name,
          [`${DEAD_LETTER_PREFIX}source-subscription`]: sub.name,
          [`${DEAD_LETTER_PREFIX}original-id`]: msgId(d),
          [`${DEAD_LETTER_PREFIX}delivery-attempts`]: String(d.attempt),
          [`${DEAD_LETTER_PREFIX}last-error`]: error.slice(0, 1024),
          [`${DEAD_LETTER_PREFIX}first-failure-time`]: new Date(row?.first_failure_at ?? now).toISOString(),
          [`${DEAD_LETTER_PREFIX}original-publish-time`]: new Date(d.message.publish_time).toISOString(),
          [`${DEAD_LETTER_PREFIX}time`]: new Date(now).toISOString(),
        };
        const r = publishMessages(b, dl, [{ data: d.message.data, attributes, ...(d.message.key ? { key: d.message.key } : {}) }]);
        if (!r.message_ids.length) return false;
        acknowledge(b, sub, [seq]);
        return true;
      });
      if (parked) return 'dead-lettered';
    }
    b.log.warn('messaging: dead-letter topic cannot take the message; retrying', { subscription: sub.name, dead_letter: sub.dl_topic });
  }
  const wait = opts.backoffMs ? opts.backoffMs(d.attempt) : backoffMs(d.attempt, b.config.pushBackoffBaseMs, b.config.pushBackoffMaxMs);
  b.store.retryLater(sub.id, seq, now + wait, error, now);
  return 'retry';
}

const msgId = (d: Delivery) => `${d.message.ledger}:${d.message.entry}`;
