import type { SubRow } from './store.js';

/**
 * What the broker holds in memory for a loaded topic: its current ledger and the counters of
 * spec 3 §4.3 usage ("cumulative since a broker last loaded the topic and reset on broker restart").
 */
export class TopicRuntime {
  nextEntry = 0;
  published = 0;
  publishedBytes = 0;
  delivered = 0;
  deliveredBytes = 0;
  /** Producer identity -> last publish time (HTTP publishers are counted while recently active). */
  readonly producers = new Map<string, number>();

  constructor(readonly ledger: number) {}

  liveProducers(now: number, ttlMs: number): number {
    let n = 0;
    for (const [id, seen] of this.producers) {
      if (now - seen < ttlMs) n++;
      else this.producers.delete(id);
    }
    return n;
  }
}

export interface Consumer {
  /** First time this consumer connected: failover's active consumer is the earliest live one. */
  since: number;
  lastSeen: number;
  /** Pulls currently waiting (long polls); a waiting consumer is connected by definition. */
  waiting: number;
}

/** In-memory state of a subscription: connected consumers, key ownership, delivery counters. */
export class SubRuntime {
  delivered = 0;
  activeType?: SubRow['type'];
  readonly consumers = new Map<string, Consumer>();
  /** key-shared: ordering key -> consumer that owns it while that consumer stays connected. */
  readonly keyOwners = new Map<string, string>();
  /** Times of recent redeliveries, for redeliver_rate (per second over the last minute). */
  private readonly redeliveries: number[] = [];
  /** Consumer name -> the short tag its leased rows carry (see leaseTag). */
  private readonly tags = new Map<string, string>();
  private nextTag = 1;

  /**
   * What a leased row records as its consumer: a short per-subscription tag rather than the name
   * (`user:<uuid>/<X-Consumer-Id>`), which made every leased row grow by tens of bytes and its
   * page split. Leases never outlive the broker (a restart releases them all), so neither do tags;
   * a tag is never reused within a run.
   */
  leaseTag(consumer: string): string {
    let t = this.tags.get(consumer);
    if (t === undefined) this.tags.set(consumer, (t = (this.nextTag++).toString(36)));
    return t;
  }

  connect(id: string, now: number, type: SubRow['type']): void {
    const c = this.consumers.get(id);
    if (c) {
      c.waiting++;
      c.lastSeen = now;
    } else {
      this.consumers.set(id, { since: now, lastSeen: now, waiting: 1 });
    }
    this.activeType = type;
  }

  disconnect(id: string, now: number): void {
    const c = this.consumers.get(id);
    if (!c) return;
    c.waiting = Math.max(0, c.waiting - 1);
    c.lastSeen = now;
  }

  isLive(c: Consumer, now: number, ttlMs: number): boolean {
    return c.waiting > 0 || now - c.lastSeen < ttlMs;
  }

  /** Forgets consumers that went away; returns the lease tags of those that held leases, to release them. */
  prune(now: number, ttlMs: number): string[] {
    const gone: string[] = [];
    const released: string[] = [];
    for (const [id, c] of this.consumers) {
      if (!this.isLive(c, now, ttlMs)) {
        this.consumers.delete(id);
        gone.push(id);
        const tag = this.tags.get(id);
        if (tag !== undefined) {
          this.tags.delete(id);
          released.push(tag);
        }
      }
    }
    if (gone.length) {
      for (const [key, owner] of this.keyOwners) if (gone.includes(owner)) this.keyOwners.delete(key);
    }
    return released;
  }

  liveConsumers(now: number, ttlMs: number): number {
    let n = 0;
    for (const c of this.consumers.values()) if (this.isLive(c, now, ttlMs)) n++;
    return n;
  }

  /** failover: the earliest-connected live consumer is the only one served. */
  activeConsumer(): string | undefined {
    let best: [string, Consumer] | undefined;
    for (const e of this.consumers) if (!best || e[1].since < best[1].since) best = e;
    return best?.[0];
  }

  /**
   * key-shared: a key stays with its owner while the owner is connected; an unowned key goes to
   * a live consumer chosen by hashing the key (so keys spread over consumers, as Pulsar's hash
   * ranges do), and is delivered only to that consumer.
   */
  ownsKey(key: string, consumer: string): boolean {
    const owner = this.keyOwners.get(key);
    if (owner && this.consumers.has(owner)) return owner === consumer;
    const ids = [...this.consumers.keys()].sort();
    const chosen = ids.length ? ids[hash(key) % ids.length]! : consumer;
    this.keyOwners.set(key, chosen);
    return chosen === consumer;
  }

  noteRedelivery(now: number): void {
    this.redeliveries.push(now);
    if (this.redeliveries.length > 10_000) this.redeliveries.splice(0, this.redeliveries.length - 10_000);
  }

  redeliverRate(now: number): number {
    while (this.redeliveries.length && now - this.redeliveries[0]! > 60_000) this.redeliveries.shift();
    return Math.round((this.redeliveries.length / 60) * 1000) / 1000;
  }
}

/** FNV-1a: a stable, cheap string hash for key assignment. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
