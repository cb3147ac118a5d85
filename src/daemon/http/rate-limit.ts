import type { Clock } from '../clock.js';

export interface RateLimitConfig {
  /** Bucket size: requests a principal may send in a burst. 0 disables the limit. */
  burst: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Per-principal token bucket (spec 1 §8.7); anonymous callers are keyed by IP. Buckets are
 * in memory: a restart refills everyone, as with the rate limiters of Cloud Run or API Gateway.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly config: RateLimitConfig,
    private readonly clock: Clock,
  ) {}

  /** Takes one token; returns 0 when allowed, else the seconds until a token is available. */
  take(key: string): number {
    const { burst, refillPerSecond } = this.config;
    if (burst <= 0) return 0;
    const now = this.clock.now();
    const b = this.buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * refillPerSecond);
    b.at = now;
    this.buckets.set(key, b);
    if (this.buckets.size > 10_000) this.evictFull(now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / refillPerSecond;
  }

  private evictFull(now: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.config.refillPerSecond >= this.config.burst) this.buckets.delete(k);
    }
  }
}

/** Sliding-window attempt counter for the sign-in throttle (spec 1 §5: 10 per IP, 50 per account, 15 minutes). */
export class AttemptWindow {
  private readonly attempts = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  /** Records an attempt; returns 0 when allowed, else seconds until the oldest attempt leaves the window. */
  hit(key: string): number {
    const now = this.clock.now();
    const list = (this.attempts.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length >= this.max) {
      this.attempts.set(key, list);
      return (list[0]! + this.windowMs - now) / 1000;
    }
    list.push(now);
    this.attempts.set(key, list);
    return 0;
  }
}
