import type { Cron } from 'croner';
import type { AreaContext } from '../../area.js';
import { tx } from '../../store/db.js';
import type { TriggerClock } from './clock.js';
import type { TriggersConfig } from './config.js';
import { nextRunAfter, parseSchedule } from './schedule.js';
import { sourceOf, triggerStore as store, type TriggerRow } from './store.js';

/** Runs delayed while the daemon runs that still each fire; more than this is treated as a downtime. */
const MAX_DELAYED = 60;

/**
 * The schedule source. Each schedule trigger keeps the run it owes next (`next_fire_at`) in
 * SQLite; one timer waits for the earliest. When a run falls due its firing is queued and the
 * next run computed in the same transaction, so a crash (kill -9) can neither lose nor repeat it.
 *
 * Catch-up rule (docs/decisions/triggers.md): when more than one run fell due since the trigger
 * last fired (the daemon was down, or the machine slept), only the latest is fired, once, and
 * only if it fell due within the catch-up window; the others are skipped, never replayed one per
 * missed minute. Two daemons never share a state directory (the daemon lock), so nothing fires twice.
 */
export class Scheduler {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly crons = new Map<string, { expr: string; cron: Cron }>();

  constructor(
    private readonly ctx: AreaContext,
    private readonly clock: TriggerClock,
    private readonly cfg: TriggersConfig,
    private readonly fired: () => void,
  ) {}

  /** Runs due before this instant fell due while the daemon was not running. */
  private startedAt = 0;

  start(): void {
    this.startedAt = this.clock.now();
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** The first run after `after` for a trigger's schedule (cached parse). */
  nextRun(t: TriggerRow, after: number): number | null {
    const s = sourceOf(t).schedule;
    if (!s) return null;
    const key = `${s.cron}\u0000${s.time_zone}`;
    let c = this.crons.get(t.id);
    if (c?.expr !== key) this.crons.set(t.id, (c = { expr: key, cron: parseSchedule(s.cron, s.time_zone) }));
    return nextRunAfter(c.cron, after);
  }

  forget(triggerId: string): void {
    this.crons.delete(triggerId);
  }

  /** A trigger was created or changed: the timer may need to wake earlier. */
  rearm(): void {
    this.arm();
  }

  private tick(): void {
    if (this.stopped) return;
    try {
      const now = this.clock.now();
      let queued = 0;
      for (const t of store.dueSchedules(this.ctx.db, now)) queued += this.fireDue(t, now);
      if (queued) this.fired();
    } catch (e) {
      this.ctx.log.error('triggers: scheduler tick failed', { error: String((e as Error).stack ?? e) });
    }
    this.arm();
  }

  /**
   * Queues the due runs of one trigger and owes the next. Runs that fell due while this daemon was
   * running were only delayed (a busy event loop) and each fires, up to MAX_DELAYED; runs that
   * fell due before it started, or more than that (a machine asleep), collapse into the latest one,
   * fired once as a catch-up if inside the window.
   */
  private fireDue(t: TriggerRow, now: number): number {
    return tx(this.ctx.db, () => {
      const fresh = store.byId(this.ctx.db, t.id);
      if (fresh?.next_fire_at == null || fresh.next_fire_at > now) return 0;
      const s = sourceOf(fresh).schedule!;
      const due: number[] = [fresh.next_fire_at];
      let missed = 0;
      for (let next = this.nextRun(fresh, due[due.length - 1]!); next !== null && next <= now; next = this.nextRun(fresh, due[due.length - 1]!)) {
        due.push(next);
        if (due.length > MAX_DELAYED) due.shift();
        if (++missed > 100_000) break; // a seconds schedule missed for days: stop counting
      }
      const last = due[due.length - 1]!;
      const collapse = due[0]! < this.startedAt || missed >= MAX_DELAYED;
      const runs = collapse ? [last] : due;
      let n = 0;
      for (const at of runs) {
        if (collapse && now - at > this.cfg.catchupWindowMs) continue;
        const id = store.addFiring(this.ctx.db, {
          trigger_id: fresh.id,
          event_key: `run:${at}`,
          scheduled_at: at,
          body: s.payload !== undefined ? Buffer.from(s.payload, 'utf8') : null,
          object_key: null,
          catch_up: collapse ? 1 : 0,
          manual: 0,
          status: 'pending',
          next_attempt_at: now,
        });
        if (id) n++;
      }
      if (collapse) this.ctx.log.info('triggers: schedule runs missed while not running; firing the latest once', { trigger: fresh.name, missed: missed + 1, fired: n });
      store.setNextFire(this.ctx.db, fresh.id, this.nextRun(fresh, Math.max(now, last)));
      return n;
    });
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const next = store.nextFireAt(this.ctx.db);
    if (next === null) return;
    // Timers are capped so a far run is re-checked (setTimeout overflows past ~24.8 days).
    const wait = Math.min(this.clock.realDelay(next - this.clock.now()), 3_600_000);
    this.timer = setTimeout(() => this.tick(), Math.max(0, wait));
  }
}
