import type { PulledMessage } from '../../../api/messaging.js';
import type { Broker } from './broker.js';
import type { Delivery, DeliveryRow, PendingRow, SubRow } from './store.js';
import { acknowledge, encodeAckId } from './ack.js';

export type { Delivery } from './store.js';

/**
 * Leases up to `max` deliverable messages to one consumer, in publish order, in one transaction:
 * each gets attempt + 1 and stays invisible until `leaseMs` passes. Routing follows the type:
 * shared serves anyone; key-shared gives each ordering key to one consumer; failover serves only
 * the active (earliest connected) consumer. max_ack_pending bounds what is in flight.
 *
 * `ordered` (push) holds back what would overtake an earlier message: 'all' delivers nothing while
 * any message is leased or backing off (exclusive, failover); 'key' does the same per ordering key
 * and takes one message per key (key-shared). A failed message thus blocks its successors until it
 * succeeds or is dead-lettered, as Pub/Sub ordering keys do. The state lives in the rows, so it
 * holds across restarts.
 */
export function take(b: Broker, subId: number, consumer: string, max: number, leaseMs?: number, ordered?: 'all' | 'key'): Delivery[] {
  return b.store.tx(() => {
    const sub = b.store.subById(subId);
    if (!sub || sub.state === 'deleting') return [];
    const now = b.clock.now();
    const rt = b.subRuntime(sub.id);
    for (const tag of rt.prune(now, b.config.consumerTtlMs)) b.store.releaseConsumer(sub.id, tag, now);
    if (sub.type === 'failover' && rt.activeConsumer() !== consumer) return [];
    const inflight = b.store.inflight(sub.id, now);
    if (ordered === 'all' && inflight > 0) return [];
    const room = Math.min(ordered === 'all' ? 1 : max, sub.max_ack_pending - inflight);
    if (room <= 0) return [];
    const held = ordered === 'key' ? b.store.heldKeys(sub.id, now) : undefined;
    const until = now + (leaseMs ?? sub.ack_deadline_seconds * 1000);
    let picked: Delivery[];
    if (sub.type !== 'key-shared' && !held) {
      // No routing skips rows: the first `room` visible rows, read with their messages, are the answer.
      const rows = b.store.visibleMessages(sub.id, sub.topic_id, now, room);
      if (!rows.length) return [];
      b.store.leaseMany(sub.id, rows.map((r) => r.seq), until, rt.leaseTag(consumer));
      picked = rows.map((r) => ({ row: r, message: r, attempt: r.attempt + 1 }));
    } else {
      const chosen: DeliveryRow[] = [];
      const scanLimit = 256;
      let after = 0;
      scan: for (;;) {
        const rows = b.store.visible(sub.id, now, after, scanLimit);
        for (const r of rows) {
          after = r.seq;
          if (sub.type === 'key-shared' && r.key && !rt.ownsKey(r.key, consumer)) continue;
          if (held && r.key) {
            if (held.has(r.key)) continue;
            held.add(r.key); // later messages of this key wait for this one
          }
          chosen.push(r);
          if (chosen.length >= room) break scan;
        }
        if (rows.length < scanLimit) break; // the backlog is exhausted
      }
      if (!chosen.length) return [];
      const seqs = chosen.map((r) => r.seq);
      b.store.leaseMany(sub.id, seqs, until, rt.leaseTag(consumer));
      const bySeq = new Map(b.store.messages(seqs).map((m) => [m.seq, m]));
      picked = [];
      for (const r of chosen) {
        const message = bySeq.get(r.seq);
        if (message) picked.push({ row: r, message, attempt: r.attempt + 1 });
      }
    }
    const topicRt = b.topicRuntime(sub.topic_id);
    for (const d of picked) {
      if (d.attempt > 1) rt.noteRedelivery(now);
      if (topicRt) {
        topicRt.delivered++;
        topicRt.deliveredBytes += d.message.size;
      }
    }
    rt.delivered += picked.length;
    return picked;
  });
}

export function pulledView(sub: SubRow, d: Delivery, withAckId: boolean): PulledMessage {
  const m = d.message;
  // One literal per shape (rather than spreads of temporary objects); field order as documented.
  const id = `${m.ledger}:${m.entry}`;
  const data = m.data.toString('base64');
  const attributes = m.attributes ? (JSON.parse(m.attributes) as Record<string, string>) : {};
  const publish_time = isoTime(m.publish_time);
  if (withAckId) {
    const ack_id = encodeAckId(sub.id, m.seq, d.attempt);
    return m.key
      ? { ack_id, id, data, attributes, key: m.key, publish_time, delivery_attempt: d.attempt }
      : { ack_id, id, data, attributes, publish_time, delivery_attempt: d.attempt };
  }
  return m.key
    ? { id, data, attributes, key: m.key, publish_time, delivery_attempt: d.attempt }
    : { id, data, attributes, publish_time, delivery_attempt: d.attempt };
}

/** A batch's messages share their publish time: format it once. */
let lastTime = NaN;
let lastIso = '';
function isoTime(ms: number): string {
  if (ms !== lastTime) {
    lastIso = new Date(ms).toISOString();
    lastTime = ms;
  }
  return lastIso;
}

export interface PullResult {
  messages: PulledMessage[];
  acknowledged?: number;
  error?: string;
}

/**
 * A long poll: returns as soon as at least one message can be delivered, or empty after
 * `timeoutMs`. Waiting is event driven (publish, acknowledgement, lease expiry wake the waiter).
 */
export async function pull(
  b: Broker,
  sub: SubRow,
  opts: { max: number; timeoutMs: number; autoAck: boolean; consumer: string; aborted: () => boolean },
): Promise<PullResult> {
  const rt = b.subRuntime(sub.id);
  rt.connect(opts.consumer, b.clock.now(), sub.type);
  const deadline = Date.now() + opts.timeoutMs;
  let got: Delivery[] = [];
  try {
    for (;;) {
      const lookedAt = b.clock.now();
      got = take(b, sub.id, opts.consumer, opts.max);
      // A full batch may have left messages behind: pass the wake-up on to the next waiting pull.
      if (got.length === opts.max && sub.type === 'shared') b.wakeForMessages(sub.id);
      const left = deadline - Date.now();
      if (got.length || left <= 0 || b.stopped || opts.aborted()) break;
      await b.waitFor(sub.id, left, lookedAt, sub.type === 'shared');
    }
  } finally {
    rt.disconnect(opts.consumer, b.clock.now());
  }
  if (!opts.autoAck) return { messages: got.map((d) => pulledView(sub, d, true)) };
  const acknowledged = acknowledge(b, sub, got.map((d) => d.message.seq));
  const messages = got.map((d) => pulledView(sub, d, false));
  if (acknowledged < got.length) {
    return {
      messages,
      acknowledged,
      error: `auto_ack acknowledged ${acknowledged} of ${got.length} messages; the rest will be redelivered after the deadline`,
    };
  }
  return { messages, acknowledged };
}
