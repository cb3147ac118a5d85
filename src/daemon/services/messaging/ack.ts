import { badRequest } from '../../http/errors.js';
import type { Broker } from './broker.js';
import type { SubRow } from './store.js';

/**
 * Ack ids name one delivery: subscription, message sequence and attempt. They are opaque to
 * callers; the subscription part lets an id presented to another subscription be refused.
 */
export function encodeAckId(subId: number, seq: number, attempt: number): string {
  return Buffer.from(`${subId}.${seq}.${attempt}`).toString('base64url');
}

export function decodeAckId(id: string): { subId: number; seq: number; attempt: number } | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined;
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(Buffer.from(id, 'base64url').toString('utf8'));
  return m ? { subId: Number(m[1]), seq: Number(m[2]), attempt: Number(m[3]) } : undefined;
}

/** Parses every id first: one id of another subscription refuses the whole request (400). */
export function parseAckIds(sub: SubRow, ids: string[]): number[] {
  return ids.map((id) => {
    const d = decodeAckId(id);
    if (!d || d.subId !== sub.id) throw badRequest(`ack_ids invalid for this subscription: ${JSON.stringify(id.slice(0, 80))}`);
    return d.seq;
  });
}

/**
 * Acknowledges messages of a subscription in one transaction and reclaims messages no other
 * subscription owes. Returns how many were still owed (an id acknowledged twice counts once).
 * An acknowledgement is accepted from any consumer and any attempt, as with Pulsar and Pub/Sub.
 */
export function acknowledge(b: Broker, sub: SubRow, seqs: number[]): number {
  if (!seqs.length) return 0;
  const count = b.store.tx(() => {
    const { acked, freed } = b.store.ackMany(sub.id, sub.topic_id, seqs);
    b.store.addStorage(sub.topic_id, -freed);
    return acked;
  });
  // Room under max_ack_pending may have opened.
  if (count) b.wake(sub.id);
  return count;
}
