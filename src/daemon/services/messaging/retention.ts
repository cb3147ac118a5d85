import { tx } from '../../store/db.js';
import type { MsgStore } from './store.js';

/**
 * max_age enforcement (Pulsar's message TTL): messages older than a topic's max_age are dropped
 * for every subscription, whether or not they were delivered. Runs on the broker's sweep timer.
 * Returns the topics that lost messages.
 */
export function sweepExpired(store: MsgStore, now: number): number[] {
  const touched: number[] = [];
  for (const t of store.topicsWithMaxAge()) {
    const before = now - t.max_age_ms;
    let freed = 0;
    for (;;) {
      const batch = store.expired(t.id, before, 500);
      if (!batch.length) break;
      tx(store.db, () => {
        let f = 0;
        for (const m of batch) f += store.dropMessage(t.id, m.seq);
        store.addStorage(t.id, -f);
        freed += f;
      });
      if (batch.length < 500) break;
    }
    if (freed) touched.push(t.id);
  }
  return touched;
}

/**
 * discard old: drops the oldest messages of a topic until `needed` bytes are free. Runs inside
 * the caller's transaction. Returns the bytes freed.
 */
export function dropOldest(store: MsgStore, topicId: number, needed: number): number {
  let freed = 0;
  while (freed < needed) {
    const batch = store.oldest(topicId, 64);
    if (!batch.length) break;
    for (const m of batch) {
      freed += store.dropMessage(topicId, m.seq);
      if (freed >= needed) break;
    }
  }
  return freed;
}
