import type { AreaContext, ConsumedMessage, ConsumerOutcome } from '../../area.js';
import { tx } from '../../store/db.js';
import { findProject } from '../accounts/access.js';
import type { TriggerClock } from './clock.js';
import type { TriggersConfig } from './config.js';
import { TRIGGER_HEADER } from './request.js';
import { backoffMs, isPermanent } from './retry.js';
import { PRUNE_EVERY, retryOf, sourceOf, triggerStore as store, type TriggerRow } from './store.js';
import { deliverOnce } from './targets.js';

/**
 * The pubsub source: each trigger consumes its subscription through the messaging broker
 * (Hooks.messagingConsumers), which acknowledges a message only after a 2xx, backs off with the
 * trigger's retry.backoff and redelivers otherwise, and dead-letters (or drops) as the
 * subscription says; a permanent failure (4xx) skips the remaining attempts. Each message is one
 * firing in the history, updated on every attempt.
 */
export class PubsubSource {
  private readonly detach = new Map<string, () => void>();
  /** Last HTTP status per message in flight, kept from the send to the broker's verdict. */
  private readonly lastStatus = new Map<string, number>();

  constructor(
    private readonly ctx: AreaContext,
    private readonly clock: TriggerClock,
    private readonly cfg: TriggersConfig,
  ) {}

  start(): void {
    for (const t of store.bySource(this.ctx.db, 'pubsub')) this.attach(t);
  }

  stop(): void {
    for (const d of this.detach.values()) d();
    this.detach.clear();
  }

  attach(t: TriggerRow): void {
    this.release(t.id);
    const src = sourceOf(t).pubsub;
    const hook = this.ctx.hooks.messagingConsumers;
    if (!src || !hook) return;
    const id = t.id;
    const d = hook.attach(
      t.project_id,
      src.topic,
      src.subscription,
      (m, signal) => this.send(id, m, signal),
      (n) => {
        const row = store.byId(this.ctx.db, id);
        return row ? backoffMs(retryOf(row), n) : 1000;
      },
      (messageId, result, error) => this.settled(id, messageId, result, error),
    );
    this.detach.set(t.id, d);
  }

  release(triggerId: string): void {
    this.detach.get(triggerId)?.();
    this.detach.delete(triggerId);
  }

  private async send(triggerId: string, m: ConsumedMessage, signal: AbortSignal): Promise<ConsumerOutcome> {
    const t = store.byId(this.ctx.db, triggerId);
    const project = t ? findProject(this.ctx.db, t.project_id) : undefined;
    if (!t || !project) return { ok: false, error: 'the trigger is gone' };
    store.upsertBrokerFiring(this.ctx.db, t.id, `msg:${m.id}`, m.publishTime, m.attempt, this.clock.now());
    const headers: Record<string, string> = { ...m.headers, [TRIGGER_HEADER]: `projects/${project.short}/triggers/${t.name}` };
    // An agent's /invoke is not an event sink: it gets the message body alone (request.ts).
    if (t.target_kind === 'agent') for (const k of Object.keys(headers)) if (k.startsWith('ce-')) delete headers[k];
    const out = await deliverOnce(this.ctx, t, project.short, { headers, body: m.body }, Math.min(this.cfg.attemptTimeoutMs, m.deadlineMs), signal);
    if (out.status !== undefined) this.lastStatus.set(`${t.id}/${m.id}`, out.status);
    return { ok: out.ok, permanent: !out.ok && isPermanent(out.status), ...(out.status !== undefined ? { status: out.status } : {}), ...(out.error ? { error: out.error } : {}) };
  }

  private settled(triggerId: string, messageId: string, result: 'acknowledged' | 'retry' | 'dead-lettered' | 'dropped', error: string): void {
    const status = this.lastStatus.get(`${triggerId}/${messageId}`) ?? null;
    if (result !== 'retry') this.lastStatus.delete(`${triggerId}/${messageId}`);
    const f = store.firingByEvent(this.ctx.db, triggerId, `msg:${messageId}`);
    if (!f) return;
    const now = this.clock.now();
    tx(this.ctx.db, () => {
      if (result === 'acknowledged') store.finish(this.ctx.db, f.id, 'succeeded', now, status, '');
      else if (result === 'retry') store.retryAt(this.ctx.db, f.id, null, status, error);
      else if (result === 'dead-lettered') store.finish(this.ctx.db, f.id, 'dead_lettered', now, status, `${error} (dead-lettered after ${f.attempts} attempts)`);
      else store.finish(this.ctx.db, f.id, 'failed', now, status, `${error} (dropped after ${f.attempts} attempts: the subscription has no dead-letter topic)`);
      if (f.id % PRUNE_EVERY === 0) store.prune(this.ctx.db, triggerId, this.cfg.historyLimit);
    });
  }
}
