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

  /** The latest run at or before `now` (never before `floor`, a run known to be due). */
  private latestRun(t: TriggerRow, now: number, floor: number): number {
    this.nextRun(t, floor); // parses and caches the cron
    const cron = this.crons.get(t.id)!.cron;
    // previousRuns answers runs strictly before a whole second: ask past now, step back if needed.
    let r = cron.previousRuns(1, new Date(now + 1000))[0]?.getTime();
    if (r !== undefined && r > now) r = cron.previousRuns(1, new Date(r))[0]?.getTime();
    return r !== undefined && r >= floor ? r : floor;
  }

  forget(triggerId: string): void {
    this.crons.delete(triggerId);
  }

  /** A trigger was created or changed: the timer may need to wake earlier. */
  rearm(): void {
    this.arm();
  }

  /**
   * Due runs are queued and handed to the deliverer first, in one transaction without any cron
   * arithmetic (computing a run in a zone costs about a millisecond); the next runs are computed
   * after. A crash between the two leaves next_fire_at on a run already queued: the restart finds
   * it due, and its firing (keyed by the run's time) is not queued twice.
   */
  private tick(): void {
    if (this.stopped) return;
    try {
      const now = this.clock.now();
      const due = store.dueSchedules(this.ctx.db, now);
      const onTime = due.filter((t) => t.next_fire_at! >= this.startedAt);
      if (onTime.length) {
        const queued = tx(this.ctx.db, () => onTime.filter((t) => this.queue(t, t.next_fire_at!, now, false)).length);
        // The deliverer's pump is queued before the rest of this tick (setImmediate runs in order).
        if (queued) this.fired();
      }
      if (due.length) return void setImmediate(() => this.advance(due, now));
    } catch (e) {
      this.ctx.log.error('triggers: scheduler tick failed', { error: String((e as Error).stack ?? e) });
    }
    this.arm();
  }

  /** The cron arithmetic of a tick: delayed or missed runs, and the run each trigger owes next. */
  private advance(due: TriggerRow[], now: number): void {
    if (this.stopped) return;
    try {
      let more = 0;
      for (const t of due) more += this.fireDue(t, now);
      if (more) this.fired();
    } catch (e) {
      this.ctx.log.error('triggers: scheduler tick failed', { error: String((e as Error).stack ?? e) });
    }
    this.arm();
  }

  private queue(t: TriggerRow, at: number, now: number, catchUp: boolean): boolean {
    const payload = sourceOf(t).schedule?.payload;
    return (
      store.addFiring(this.ctx.db, {
        trigger_id: t.id,
        event_key: `run:${at}`,
        scheduled_at: at,
        body: payload !== undefined ? Buffer.from(payload, 'utf8') : null,
        object_key: null,
        catch_up: catchUp ? 1 : 0,
        manual: 0,
        status: 'pending',
        next_attempt_at: now,
      }) !== undefined
    );
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
      const first = fresh.next_fire_at;
      // Runs delayed while running are enumerated (at most MAX_DELAYED); a downtime is not: its
      // latest run is asked of the cron directly (thousands of hours missed cost one call).
      const due: number[] = [first];
      let overflow = false;
      if (first >= this.startedAt) {
        for (let next = this.nextRun(fresh, first); next !== null && next <= now; next = this.nextRun(fresh, next)) {
          if (due.length >= MAX_DELAYED) {
            overflow = true;
            break;
          }
          due.push(next);
        }
      }
      const collapse = first < this.startedAt || overflow;
      const last = collapse ? this.latestRun(fresh, now, first) : due[due.length - 1]!;
      const runs = collapse ? [last] : due;
      let n = 0;
      for (const at of runs) {
        if (collapse && now - at > this.cfg.catchupWindowMs) continue;
        if (this.queue(fresh, at, now, collapse)) n++;
      }
      if (collapse) this.ctx.log.info('triggers: schedule runs missed while not running; firing the latest once', { trigger: fresh.name, since: new Date(first).toISOString(), latest: new Date(last).toISOString(), fired: n });
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
