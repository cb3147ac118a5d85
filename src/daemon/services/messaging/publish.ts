import type { Broker } from './broker.js';
import type { MessageRow, TopicRow } from './store.js';
import { dropOldest } from './retention.js';
import { formatBytes } from '../../../api/quantity.js';

export interface OutMessage {
  data: Buffer;
  attributes: Record<string, string>;
  key?: string;
}

export interface PublishResult {
  message_ids: string[];
  /** Set when fewer than all messages were published; the rest were refused. */
  error?: string;
}

/** Bytes a message occupies against max_bytes: payload, key and attribute names and values. */
export function messageSize(m: OutMessage): number {
  let n = m.data.length + (m.key ? Buffer.byteLength(m.key) : 0);
  const a = m.attributes;
  for (const k in a) n += Buffer.byteLength(k) + Buffer.byteLength(a[k]!);
  return n;
}

/** Stored attributes: null when there are none (most messages), without building a key list. */
function storedAttributes(a: Record<string, string>): string | null {
  for (const _ in a) return JSON.stringify(a);
  return null;
}

/**
 * Appends messages to a ready topic in request order, in one transaction that commits before
 * the caller answers (a 200 is durable). Each message gets `<ledger>:<entry>`. A message is stored
 * only when some subscription will owe an acknowledgement for it; otherwise it is counted and
 * reclaimed at once. When the topic is full, discard old drops the oldest messages and discard
 * new refuses the rest of the batch. Callers must check that the topic is ready.
 */
export function publishMessages(b: Broker, topic: TopicRow, messages: OutMessage[], producer?: string): PublishResult {
  const rt = b.loadTopic(topic.id);
  const now = b.clock.now();
  const ids: string[] = [];
  let error: string | undefined;
  let bytes = 0;
  let subs: number[] = [];
  b.store.tx(() => {
    const fresh = b.store.topicById(topic.id)!;
    subs = b.store.liveSubIds(topic.id);
    let storage = fresh.storage_bytes;
    const start = storage;
    // Rows are written in chunks (multi-row INSERT, pending rows by range); written before any
    // discard-old drop so the drop sees this batch's earlier messages as the original order has it.
    let rows: Omit<MessageRow, 'seq'>[] = [];
    const flush = () => {
      if (!rows.length) return;
      const first = b.store.insertMessages(rows);
      for (const s of subs) b.store.insertPendingRange(s, topic.id, first, first + rows.length - 1);
      rows = [];
    };
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      const size = messageSize(m);
      if (subs.length) {
        if (size > fresh.max_bytes) {
          error = `message ${i} (${size} bytes) is larger than the topic's max_bytes ${formatBytes(fresh.max_bytes)}`;
          break;
        }
        if (storage + size > fresh.max_bytes) {
          if (fresh.discard === 'new') {
            error = `topic ${fresh.name} is full (max_bytes ${formatBytes(fresh.max_bytes)}, discard new): acknowledge messages or raise max_bytes`;
            break;
          }
          flush();
          storage -= dropOldest(b.store, topic.id, storage + size - fresh.max_bytes);
        }
      }
      const entry = rt.nextEntry++;
      if (subs.length) {
        rows.push({
          topic_id: topic.id,
          ledger: rt.ledger,
          entry,
          data: m.data,
          attributes: storedAttributes(m.attributes),
          key: m.key ? m.key : null,
          publish_time: now,
          size,
        });
        storage += size;
      }
      ids.push(`${rt.ledger}:${entry}`);
      bytes += size;
    }
    flush();
    b.store.addStorage(topic.id, storage - start);
  });
  rt.published += ids.length;
  rt.publishedBytes += bytes;
  if (producer) rt.producers.set(producer, now);
  // The subscriptions read in the transaction are exactly those owed the new messages.
  if (ids.length) for (const s of subs) b.wakeForMessages(s);
  return error ? { message_ids: ids, error } : { message_ids: ids };
}
