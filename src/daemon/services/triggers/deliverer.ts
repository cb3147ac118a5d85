import { InFlight } from '../../in-flight.js';
import { readFile } from 'node:fs/promises';
import type { AreaContext } from '../../area.js';
import { tx } from '../../store/db.js';
import { findProject } from '../accounts/access.js';
import type { TriggerClock } from './clock.js';
import type { TriggersConfig } from './config.js';
import { objectFile } from './objects.js';
import { deliveryHeaders } from './request.js';
import { backoffMs, isPermanent } from './retry.js';
import { PRUNE_EVERY, retryOf, sourceOf, triggerStore as store, type FiringRow, type TriggerRow } from './store.js';
import { deliverOnce } from './targets.js';

/**
 * Sends the pending deliveries of schedule and object-store firings (pubsub firings are driven by
 * the messaging broker). The queue is the trg_firings table: an attempt is recorded before it is
 * sent and its outcome after, each in its own commit, so a kill -9 at any point loses nothing (a
 * crash mid-attempt resumes it at start). Event driven: a new firing or a backoff expiry wakes it.
 */
export class Deliverer {
  private scheduled = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly inFlight = new InFlight(
    (e) => this.ctx.log.error('triggers: delivery failed', { error: String((e as Error)?.stack ?? e) }),
    () => this.kick(),
  );

  constructor(
    private readonly ctx: AreaContext,
    private readonly clock: TriggerClock,
    private readonly cfg: TriggersConfig,
  ) {}

  start(): void {
    const resumed = store.resumeInterrupted(this.ctx.db, this.clock.now());
    if (resumed) this.ctx.log.info('triggers: resuming deliveries interrupted by the last stop', { resumed });
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.inFlight.settled();
  }

  kick(): void {
    if (this.stopped || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      try {
        this.pump();
      } catch (e) {
        this.ctx.log.error('triggers: delivery pump failed', { error: String((e as Error).stack ?? e) });
      }
    });
  }

  private pump(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const room = this.cfg.concurrency - this.inFlight.count;
    if (room > 0) {
      for (const f of store.due(this.ctx.db, now, room)) {
        store.startAttempt(this.ctx.db, f.id, now);
        this.inFlight.track(this.attempt(f.id));
      }
    }
    this.armTimer();
  }


  /** Wakes at the earliest backoff expiry: retries need no polling. */
  private armTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    const next = store.nextDueAt(this.ctx.db);
    if (next === null || this.inFlight.count >= this.cfg.concurrency) return;
    this.timer = setTimeout(() => this.kick(), Math.max(1, this.clock.realDelay(next - this.clock.now())));
  }

  private async attempt(id: number): Promise<void> {
    const f = store.firing(this.ctx.db, id);
    const t = f ? store.byId(this.ctx.db, f.trigger_id) : undefined;
    if (!f || !t) return; // the trigger was deleted meanwhile (its firings with it)
    const project = findProject(this.ctx.db, t.project_id);
    if (!project) return;
    const body = await this.body(t, f);
    if (typeof body === 'string') return this.settle(t, f, { ok: false, permanent: true, error: body });
    const headers = deliveryHeaders(t, project.short, f, t.source_type === 'objectstore' ? 'application/octet-stream' : 'application/json');
    const out = await deliverOnce(this.ctx, t, project.short, { headers, body }, this.cfg.attemptTimeoutMs, this.abort.signal);
    if (this.stopped) return; // the attempt stays 'delivering' and is resumed at the next start
    this.settle(t, f, { ok: out.ok, permanent: !out.ok && isPermanent(out.status), ...(out.status !== undefined ? { status: out.status } : {}), error: out.error ?? '' });
  }

  /** The POST body: the schedule payload unchanged, or the object's own bytes read now; a string is why there is none. */
  private async body(t: TriggerRow, f: FiringRow): Promise<Buffer | string> {
    if (f.object_key === null) return f.body ?? Buffer.alloc(0);
    const src = sourceOf(t).objectstore;
    const project = findProject(this.ctx.db, t.project_id);
    if (!src || !project) return 'the trigger no longer watches a bucket';
    const file = objectFile(this.ctx.config.home, project.short, src.bucket, f.object_key);
    try {
      return await readFile(file);
    } catch (e) {
      return `object ${f.object_key} could not be read (deleted before delivery?): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
    }
  }

  private settle(t: TriggerRow, f: FiringRow, out: { ok: boolean; permanent?: boolean; status?: number; error: string }): void {
    const now = this.clock.now();
    const attempts = f.attempts; // counted when the attempt started
    const retry = retryOf(t);
    tx(this.ctx.db, () => {
      const status = out.status ?? null;
      if (out.ok) store.finish(this.ctx.db, f.id, 'succeeded', now, status, '');
      else if (out.permanent || attempts >= retry.max_attempts) store.finish(this.ctx.db, f.id, 'failed', now, status, describe(out, attempts, retry.max_attempts));
      else store.retryAt(this.ctx.db, f.id, now + backoffMs(retry, attempts), status, out.error);
      if (f.id % PRUNE_EVERY === 0) store.prune(this.ctx.db, t.id, this.cfg.historyLimit);
    });
  }
}

function describe(out: { permanent?: boolean; error: string }, attempts: number, max: number): string {
  if (out.permanent) return `${out.error} (permanent: not retried)`;
  return `${out.error} (gave up after ${attempts} of ${max} attempts)`;
}
