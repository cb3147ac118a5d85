import type { Reconciliation } from '../api/health.js';

/**
 * The daemon's start after it listens (docs/decisions/speed-daemon.md): areas start one after the
 * other in the background while /healthz already answers. A request for an area that has not
 * started yet waits for it (never a wrong answer from a half-started area); a started area costs
 * a request one map lookup, no promise. Areas that bring workloads back count them here, and
 * /healthz shows the counts (`platform daemon status`: "reconciling: cache 7/20").
 */
export class Startup {
  private readonly waiting = new Map<string, { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void }>();
  private readonly failures = new Map<string, string>();
  private readonly counts = new Map<string, { done: number; total: number }>();
  private total = 0;
  private ready = 0;
  private startedAt = performance.now();
  private doneMs: number | undefined;

  /** Every area the daemon will start, before any request can arrive. */
  expect(areas: readonly string[]): void {
    this.total = areas.length;
    this.startedAt = performance.now();
    for (const name of areas) {
      let resolve!: () => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      // Nobody may be waiting when an area fails (the process exits then anyway).
      promise.catch(() => undefined);
      this.waiting.set(name, { promise, resolve, reject });
    }
  }

  started(area: string): void {
    const w = this.waiting.get(area);
    if (!w) return;
    this.waiting.delete(area);
    this.ready++;
    if (this.ready === this.total) this.doneMs = performance.now() - this.startedAt;
    w.resolve();
  }

  failed(area: string, error: Error): void {
    this.failures.set(area, error.message);
    this.waiting.get(area)?.reject(error);
  }

  /** What a request for the area must wait for; undefined once the area has started (the hot path). */
  pending(area: string | undefined): Promise<void> | undefined {
    return area === undefined || this.waiting.size === 0 ? undefined : this.waiting.get(area)?.promise;
  }

  /**
   * Workloads an area brings back in the background, counted as each one settles (ready or given
   * up: either way it is no longer "coming"). Returns the tick to call once per workload.
   */
  track(what: string, total: number): () => void {
    const c = { done: 0, total };
    this.counts.set(what, c);
    return () => {
      if (c.done < c.total) c.done++;
    };
  }

  report(): Reconciliation {
    const workloads = Object.fromEntries(this.counts);
    const settled = this.ready === this.total && [...this.counts.values()].every((c) => c.done >= c.total);
    return {
      state: this.failures.size ? 'failed' : settled ? 'done' : 'reconciling',
      areas: { started: this.ready, total: this.total },
      workloads,
      ...(this.doneMs !== undefined ? { areas_started_ms: Math.round(this.doneMs) } : {}),
      ...(this.failures.size ? { errors: Object.fromEntries(this.failures) } : {}),
    };
  }
}
