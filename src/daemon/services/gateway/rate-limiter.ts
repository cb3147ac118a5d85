import type { RateLimit } from '../../../api/gateway.js';
import type { Clock } from '../../clock.js';

const UNIT_MS: Record<RateLimit['unit'], number> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (Retry-After when refused, RateLimit-Reset always). */
  resetSeconds: number;
}

/**
 * Fixed windows aligned on the unit (docs/decisions/gateway.md, "Rate limits"): a counter per
 * endpoint, key and window, checked and incremented in one synchronous step, so concurrent
 * requests on the event loop cannot both take the last slot (no overshoot). Counters live in the
 * daemon's memory: a restart forgives the current window.
 */
export class RateLimiter {
  private readonly counts = new Map<string, { window: number; used: number; end: number }>();
  private sweptAt = 0;

  constructor(private readonly clock: Clock) {}

  take(endpointId: string, key: string, limit: RateLimit): RateDecision {
    const now = this.clock.now();
    const size = UNIT_MS[limit.unit];
    const window = Math.floor(now / size);
    const id = `${endpointId}\u0000${key}`;
    let c = this.counts.get(id);
    if (!c || c.window !== window) this.counts.set(id, (c = { window, used: 0, end: (window + 1) * size }));
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * size - now) / 1000));
    if (c.used >= limit.requests) return { allowed: false, limit: limit.requests, remaining: 0, resetSeconds };
    c.used++;
    this.sweep(now);
    return { allowed: true, limit: limit.requests, remaining: limit.requests - c.used, resetSeconds };
  }

  /** Forgets an endpoint's counters (its limit changed or it was deleted). */
  forget(endpointId: string): void {
    for (const k of this.counts.keys()) if (k.startsWith(`${endpointId}\u0000`)) this.counts.delete(k);
  }

  /** Drops counters of past windows now and then, so one-off clients do not pile up. */
  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [k, c] of this.counts) {
      if (c.end <= now) this.counts.delete(k);
    }
  }
}
