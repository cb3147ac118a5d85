import { badRequest } from '../../http/errors.js';
import type { Broker } from './broker.js';
import type { SubRow } from './store.js';

/**
 * Ack ids name one delivery: subscription, message sequence and attempt. They are opaque to
 * callers; the subscription part lets an id presented to another subscription be refused.
 */
export function encodeAckId(subId: number, seq: number, attempt: number): string {
  // base64url of the ASCII text, encoded by hand: one per delivered message, without a Buffer.
  const text = `${subId}.${seq}.${attempt}`;
  let out = '';
  let i = 0;
  for (; i + 2 < text.length; i += 3) {
    const n = (text.charCodeAt(i) << 16) | (text.charCodeAt(i + 1) << 8) | text.charCodeAt(i + 2);
    out += ABC[n >> 18]! + ABC[(n >> 12) & 63]! + ABC[(n >> 6) & 63]! + ABC[n & 63]!;
  }
  const left = text.length - i;
  if (left === 1) {
    const n = text.charCodeAt(i) << 16;
    out += ABC[n >> 18]! + ABC[(n >> 12) & 63]!;
  } else if (left === 2) {
    const n = (text.charCodeAt(i) << 16) | (text.charCodeAt(i + 1) << 8);
    out += ABC[n >> 18]! + ABC[(n >> 12) & 63]! + ABC[(n >> 6) & 63]!;
  }
  return out;
}

const ABC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export function decodeAckId(id: string): { subId: number; seq: number; attempt: number } | undefined {
  const n = parseAckId(id);
  return n ? { subId: n[0], seq: n[1], attempt: n[2] } : undefined;
}

/** base64url alphabet value of each character code, -1 for characters outside it. */
const B64: Int8Array = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < ABC.length; i++) t[ABC.charCodeAt(i)] = i;
  return t;
})();

/**
 * `[subId, seq, attempt]` of an ack id, or undefined. Decoded by hand (base64url, then
 * `<sub>.<seq>.<attempt>` digits) without a Buffer, regular expressions or an object per id: this
 * runs for every acknowledged message and showed in profiles of the acknowledge path.
 */
function parseAckId(id: string): [number, number, number] | undefined {
  const len = id.length;
  if (len < 1 || len > 64 || len % 4 === 1) return undefined;
  const out: [number, number, number] = [0, 0, 0];
  let part = 0;
  let digits = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < len; i++) {
    const c = id.charCodeAt(i);
    const v = c < 128 ? B64[c]! : -1;
    if (v < 0) return undefined;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits < 8) continue;
    bits -= 8;
    const byte = (acc >> bits) & 0xff;
    if (byte === 46 /* . */) {
      if (!digits || part === 2) return undefined;
      part++;
      digits = 0;
    } else if (byte >= 48 && byte <= 57) {
      out[part] = out[part]! * 10 + (byte - 48);
      if (++digits > 15) return undefined; // stays an exact integer
    } else {
      return undefined;
    }
  }
  return part === 2 && digits ? out : undefined;
}

/** Parses every id first: one id of another subscription refuses the whole request (400). */
export function parseAckIds(sub: SubRow, ids: string[]): number[] {
  const seqs = new Array<number>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const n = parseAckId(ids[i]!);
    if (!n || n[0] !== sub.id) throw badRequest(`ack_ids invalid for this subscription: ${JSON.stringify(ids[i]!.slice(0, 80))}`);
    seqs[i] = n[1];
  }
  return seqs;
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
  if (count) b.wakeForMessages(sub.id);
  return count;
}
