import { InFlight } from '../../in-flight.js';
import type { AttachedConsumer, Broker } from './broker.js';
import { take, type Delivery } from './pull.js';
import { acknowledge } from './ack.js';
import { buildPushRequest } from './cloudevents.js';
import { dispatchTarget } from './push-url.js';
import { sendPush } from './push-delivery.js';
import { pushFailed } from './dead-letter.js';
import type { SubRow, TopicRow } from './store.js';

/** The push worker's consumer name: it is the subscription's one connected consumer. */
export const PUSH_CONSUMER = 'push-worker';

/**
 * Delivers a push subscription's messages (spec 3 §6). Event driven: publish, acknowledgement
 * and backoff expiry kick it; it leases up to `pushConcurrency` messages (bounded by
 * max_ack_pending) and sends them concurrently. A delivery in flight when the daemon dies keeps
 * its lease in the database and is delivered again after restart.
 */
export class PushWorker {
  private scheduled = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly inFlight = new InFlight(
    (e) => this.b.log.error('messaging: push delivery failed', { subscription: this.subId, error: String(e) }),
    () => this.kick(),
  );
  /** Deliveries answered 2xx, acknowledged together in one transaction on the next pump. */
  private acked: number[] = [];

  constructor(
    private readonly b: Broker,
    private readonly subId: number,
  ) {}

  start(): void {
    const sub = this.b.store.subById(this.subId);
    if (sub) this.b.subRuntime(this.subId).connect(PUSH_CONSUMER, this.b.clock.now(), sub.type);
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.inFlight.settled();
    this.flushAcks();
    this.b.peekSubRuntime(this.subId)?.consumers.delete(PUSH_CONSUMER);
  }

  kick(): void {
    if (this.stopped || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      try {
        this.pump();
      } catch (e) {
        this.b.log.error('messaging: push worker failed', { subscription: this.subId, error: String((e as Error).stack ?? e) });
      }
    });
  }

  /**
   * One transaction for every delivery that succeeded since the last pump: a commit per message
   * would bound push throughput by commit latency. A crash before the flush only means those
   * messages are delivered again (at-least-once).
   */
  private flushAcks(): void {
    if (!this.acked.length) return;
    const seqs = this.acked;
    this.acked = [];
    const sub = this.b.store.subById(this.subId);
    if (sub) acknowledge(this.b, sub, seqs);
  }

  private pump(): void {
    this.flushAcks();
    if (this.stopped) return;
    const sub = this.b.store.subById(this.subId);
    if (!sub || !(this.b.attachedConsumer(sub.id) || (sub.deliver_mode === 'push' && sub.push_url))) return;
    const topic = this.b.store.topicById(sub.topic_id);
    if (!topic || topic.state === 'deleting') return;
    // exclusive and failover deliver in order, one at a time; key-shared in order per key.
    const ordered = sub.type === 'exclusive' || sub.type === 'failover' ? 'all' : sub.type === 'key-shared' ? 'key' : undefined;
    const limit = ordered === 'all' ? 1 : Math.max(1, Math.min(this.b.config.pushConcurrency, sub.max_ack_pending));
    const timeoutMs = this.b.config.pushTimeoutMs > 0 ? this.b.config.pushTimeoutMs : sub.ack_deadline_seconds * 1000;
    // Taken before the takes, whose own clock reads are no earlier: see scheduleNext.
    const lookedAt = this.b.clock.now();
    while (this.inFlight.count < limit) {
      // The lease outlives the request timeout so a slow attempt is never handed out twice.
      const batch = take(this.b, sub.id, PUSH_CONSUMER, limit - this.inFlight.count, timeoutMs + 5_000, ordered);
      if (!batch.length) break;
      for (const d of batch) this.inFlight.track(this.deliver(sub, topic, d, timeoutMs));
    }
    this.scheduleNext(lookedAt);
  }


  /**
   * Wakes at the earliest backoff or lease expiry so retries need no polling. It looks for rows
   * due after `lookedAt` (a time no later than the takes' own), not after the current time: a row
   * that fell due between the take and now (a timer may fire a millisecond early) was not taken,
   * and looking past it would leave it waiting for an unrelated wake-up.
   */
  private scheduleNext(lookedAt: number): void {
    if (this.timer) clearTimeout(this.timer);
    const next = this.b.store.nextVisibleAt(this.subId, lookedAt);
    if (next === undefined) return;
    this.timer = setTimeout(() => this.kick(), Math.max(1, next - this.b.clock.now()));
  }

  private async deliver(sub: SubRow, topic: TopicRow, d: Delivery, timeoutMs: number): Promise<void> {
    const consumer = this.b.attachedConsumer(sub.id);
    if (consumer) return this.deliverTo(consumer, sub, topic, d);
    const req = buildPushRequest(sub, topic, d.message, d.attempt);
    const target = dispatchTarget(sub.push_url!, { id: sub.project_id, short: topic.short }, this.b.ctx.hooks, this.b.ctx.config.port, this.b.ctx.config.appsDomain);
    const outcome = await sendPush(target, req, timeoutMs, this.abort.signal);
    if (this.stopped) return; // the lease expires and the message is delivered again
    if (outcome.ok) {
      this.acked.push(d.message.seq); // track() kicks the pump, which acknowledges
      return;
    }
    pushFailed(this.b, sub, topic, d, outcome.error ?? `status ${outcome.status}`);
  }

  /** An attached consumer sends; acknowledgement, backoff and dead-lettering stay the broker's. */
  private async deliverTo(consumer: AttachedConsumer, sub: SubRow, topic: TopicRow, d: Delivery): Promise<void> {
    const outcome = await consumer.send(sub, topic, d, this.abort.signal);
    if (this.stopped) return;
    const error = outcome.error ?? (outcome.status ? `status ${outcome.status}` : '');
    if (outcome.ok) {
      this.acked.push(d.message.seq);
      consumer.settled(d, 'acknowledged', '');
      return;
    }
    const result = pushFailed(this.b, sub, topic, d, error, { permanent: outcome.permanent, backoffMs: (n) => consumer.backoffMs(n) });
    consumer.settled(d, result, error);
  }
}
