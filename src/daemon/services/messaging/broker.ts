import type { AreaContext } from '../../area.js';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../logger.js';
import { tx } from '../../store/db.js';
import type { MessagingConfig } from './config.js';
import { MsgStore, type Delivery, type SubRow, type TopicRow } from './store.js';
import { SubRuntime, TopicRuntime } from './runtime.js';
import { sweepExpired } from './retention.js';

/** A waiting long poll. `one`: interchangeable with the other waiters of its subscription (shared). */
interface Waiter {
  one: boolean;
  wake(): void;
}

/**
 * The embedded broker: durable state lives in SQLite (every publish and acknowledgement commits
 * before it is answered); what a real broker keeps in memory (loaded topics and their ledgers,
 * connected consumers, long-poll waiters, push workers, counters) lives here.
 */
export class Broker {
  readonly store: MsgStore;
  readonly clock: Clock;
  readonly config: MessagingConfig;
  readonly log: Logger;
  private readonly topics = new Map<number, TopicRuntime>();
  private readonly subs = new Map<number, SubRuntime>();
  private readonly waiters = new Map<number, Set<Waiter>>();
  private readonly workers = new Map<number, PushDeliverer>();
  /** Pull subscriptions another area consumes through the broker (pubsub triggers), by subscription id. */
  private readonly consumers = new Map<number, AttachedConsumer>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private sweepTimer?: NodeJS.Timeout;
  stopped = false;
  started = false;

  constructor(
    readonly ctx: AreaContext,
    private readonly newPushWorker: PushDelivererFactory,
  ) {
    this.store = new MsgStore(ctx.db);
    this.clock = ctx.clock;
    this.config = ctx.config.messaging;
    this.log = ctx.log;
  }

  /** Loads every topic (each on a fresh ledger), finishes interrupted deletes, starts push workers. */
  start(): void {
    const released = this.store.releaseAll();
    if (released) this.log.info('messaging: broker restart makes unacknowledged messages due again', { released });
    for (const t of this.store.allTopics()) {
      if (t.state === 'deleting') this.finishTopicDelete(t.id);
      else if (t.state === 'pending') this.converge('topic', t.id);
      else this.loadTopic(t.id);
    }
    for (const s of this.store.allSubs()) {
      if (s.state === 'deleting') this.finishSubDelete(s.id);
      else if (s.state === 'pending') this.converge('sub', s.id);
      else this.syncWorker(s);
    }
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(10, this.config.retentionSweepMs));
    this.sweepTimer.unref();
    this.started = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
    this.workers.clear();
    for (const id of this.waiters.keys()) this.wake(id);
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) fn();
    }, ms);
    this.timers.add(t);
  }

  // ---- topics and subscriptions in memory ----
  loadTopic(id: number): TopicRuntime {
    let rt = this.topics.get(id);
    if (!rt) {
      rt = new TopicRuntime(this.store.nextLedger());
      this.topics.set(id, rt);
    }
    return rt;
  }
  topicRuntime(id: number): TopicRuntime | undefined {
    return this.topics.get(id);
  }
  subRuntime(id: number): SubRuntime {
    let rt = this.subs.get(id);
    if (!rt) {
      rt = new SubRuntime();
      this.subs.set(id, rt);
    }
    return rt;
  }
  peekSubRuntime(id: number): SubRuntime | undefined {
    return this.subs.get(id);
  }

  /**
   * pending -> ready once the broker has loaded the resource (spec 3 §3: "broker catches up in
   * seconds"). Locally that is a new ledger for a topic and a worker for a push subscription.
   */
  converge(kind: 'topic' | 'sub', id: number): void {
    this.later(this.config.convergeDelayMs, () => {
      if (kind === 'topic') {
        const t = this.store.topicById(id);
        if (t?.state !== 'pending') return;
        this.loadTopic(id);
        this.store.setTopicState(id, 'ready');
      } else {
        const s = this.store.subById(id);
        if (s?.state !== 'pending') return;
        this.store.setSubState(id, 'ready');
        this.syncWorker({ ...s, state: 'ready' });
      }
    });
  }

  /** Topic deletion: marked deleting (202) in the request, purged just after. */
  scheduleTopicDelete(id: number): void {
    for (const s of this.store.listSubs(id, 0, 1_000_000)) this.stopWorker(s.id);
    this.later(0, () => this.finishTopicDelete(id));
  }
  private finishTopicDelete(id: number): void {
    const subs = this.store.listSubs(id, 0, 1_000_000);
    tx(this.store.db, () => this.store.purgeTopic(id));
    for (const s of subs) this.forgetSub(s.id);
    this.topics.delete(id);
  }
  scheduleSubDelete(id: number): void {
    this.stopWorker(id);
    this.later(0, () => this.finishSubDelete(id));
  }
  private finishSubDelete(id: number): void {
    const sub = this.store.subById(id);
    tx(this.store.db, () => {
      const owed = this.store.purgeSub(id);
      if (!sub) return;
      let freed = 0;
      for (const seq of owed) freed += this.store.reclaim(sub.topic_id, seq);
      this.store.addStorage(sub.topic_id, -freed);
    });
    this.forgetSub(id);
  }
  private forgetSub(id: number): void {
    this.stopWorker(id);
    this.subs.delete(id);
    this.wake(id);
  }

  // ---- push workers ----
  /** Starts or stops the push worker so it matches the subscription's current deliver mode. */
  syncWorker(sub: SubRow): void {
    if (this.stopped) return;
    const want = (sub.deliver_mode === 'push' || this.consumers.has(sub.id)) && sub.state === 'ready';
    const has = this.workers.get(sub.id);
    if (want && !has) {
      const w = this.newPushWorker(this, sub.id);
      this.workers.set(sub.id, w);
      w.start();
    } else if (!want && has) {
      this.stopWorker(sub.id);
    } else if (has) {
      has.kick();
    }
  }
  private stopWorker(id: number): void {
    const w = this.workers.get(id);
    if (!w) return;
    this.workers.delete(id);
    void w.stop();
  }
  /** Hands a subscription's deliveries to another area's sender; the push worker still leases, acks and retries. */
  attachConsumer(subId: number, consumer: AttachedConsumer): () => void {
    this.consumers.set(subId, consumer);
    this.stopWorker(subId); // a worker started for another sender must not keep it
    const sub = this.store.subById(subId);
    if (sub) this.syncWorker(sub);
    return () => {
      if (this.consumers.get(subId) !== consumer) return;
      this.consumers.delete(subId);
      this.stopWorker(subId);
    };
  }
  attachedConsumer(subId: number): AttachedConsumer | undefined {
    return this.consumers.get(subId);
  }
  pushWorkerRunning(id: number): boolean {
    return this.workers.has(id);
  }

  // ---- waking consumers ----
  /** Something changed for every waiter (deletion, patch, abort, expiry sweep, stop): wake them all, and push. */
  wake(subId: number): void {
    const set = this.waiters.get(subId);
    if (set) {
      this.waiters.delete(subId);
      for (const w of set) w.wake();
    }
    this.workers.get(subId)?.kick();
  }

  /**
   * Messages became deliverable (publish, an acknowledgement freeing max_ack_pending room). A
   * shared subscription's long polls are interchangeable: the longest-waiting one is woken and,
   * when it fills its batch, wakes the next (pull() calls this again), so a publish does not wake
   * every idle consumer to find nothing left. Other types route by consumer: all are woken.
   */
  wakeForMessages(subId: number): void {
    const set = this.waiters.get(subId);
    const first = set?.values().next().value;
    if (!set || !first?.one) return this.wake(subId);
    set.delete(first);
    if (!set.size) this.waiters.delete(subId);
    first.wake();
    this.workers.get(subId)?.kick();
  }
  wakeTopic(topicId: number): void {
    for (const id of this.store.liveSubIds(topicId)) this.wake(id);
  }

  /**
   * Waits until woken or `ms` passes. Also wakes at the subscription's next lease expiry, so a
   * long poll returns a redelivery as soon as its deadline passes. No polling loop. `lookedAt` is
   * when the caller last took (no later than the take's own clock read): a row that fell due
   * since then was not taken and must wake this waiter at once.
   */
  waitFor(subId: number, ms: number, lookedAt: number, shared = false): Promise<void> {
    if (this.stopped || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const nextAt = this.store.nextVisibleAt(subId, lookedAt);
      const leaseIn = nextAt === undefined ? Infinity : Math.max(1, nextAt - this.clock.now());
      let set = this.waiters.get(subId);
      if (!set) this.waiters.set(subId, (set = new Set()));
      const waiter: Waiter = {
        one: shared,
        wake: () => {
          clearTimeout(timer);
          const s = this.waiters.get(subId);
          if (s?.delete(waiter) && !s.size) this.waiters.delete(subId);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, Math.min(ms, leaseIn));
      set.add(waiter);
    });
  }

  private sweep(): void {
    try {
      const touched = sweepExpired(this.store, this.clock.now());
      for (const id of touched) this.wakeTopic(id);
    } catch (e) {
      this.log.warn('messaging: retention sweep failed', { error: String(e) });
    }
  }

  /** Runs the retention sweep now (used by the timer; exposed for the health probe and tests). */
  sweepNow(): void {
    this.sweep();
  }

  topicOf(sub: SubRow): TopicRow | undefined {
    return this.store.topicById(sub.topic_id);
  }
}

/**
 * What delivers a push subscription's messages. The broker starts, kicks and stops one per ready
 * push subscription but never sees how it delivers: the worker sits above the broker (it takes,
 * acknowledges and dead-letters through it), so the area hands the broker a factory instead of
 * the broker importing it.
 */
export interface PushDeliverer {
  start(): void;
  kick(): void;
  stop(): Promise<void>;
}
export type PushDelivererFactory = (b: Broker, subId: number) => PushDeliverer;

/** Another area's sender for a subscription's messages (see Hooks.messagingConsumers). */
export interface AttachedConsumer {
  send(sub: SubRow, topic: TopicRow, d: Delivery, signal: AbortSignal): Promise<{ ok: boolean; permanent?: boolean; status?: number; error?: string }>;
  backoffMs(failedAttempts: number): number;
  settled(d: Delivery, result: 'acknowledged' | FailureResult, error: string): void;
}
export type FailureResult = 'retry' | 'dead-lettered' | 'dropped';
