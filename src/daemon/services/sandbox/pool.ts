import { randomBytes } from 'node:crypto';
import type { PoolStats } from '../../../api/sandbox.js';
import { ApiError } from '../../http/errors.js';
import type { Logger } from '../../logger.js';
import type { Backend } from './backends.js';
import type { SandboxConfig } from './config.js';
import { WarmSandbox } from './warm.js';

interface Waiter {
  resolve(s: WarmSandbox): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export const newSandboxId = () => `sbx-${randomBytes(8).toString('hex')}`;

/**
 * The warm pool (spec 2 §4.6, §8): `target` sandboxes kept ready; each execution takes one and
 * destroys it, and a replacement starts at once in the background. A request finding none waits
 * (up to 30 s, then 503) while more start, bounded by `maxLive` sandboxes alive at once.
 */
export class SandboxPool {
  private readonly ready: WarmSandbox[] = [];
  private readonly inUse = new Set<WarmSandbox>();
  private readonly starting = new Set<WarmSandbox>();
  private readonly waiters: Waiter[] = [];
  private createdTotal = 0;
  private failures = 0;
  private lastFailure?: string;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly backend: Backend | undefined,
    /** Why there is no backend: the 503 every request gets. */
    private readonly unavailableReason: string,
    private readonly config: SandboxConfig,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.refill();
  }

  stats(): PoolStats {
    return { warm: this.ready.length, target: this.config.poolTarget, in_flight: this.inUse.size, created_total: this.createdTotal };
  }

  /** A ready sandbox, now in flight; 503 when sandboxes cannot be made or none came in time. */
  acquire(): Promise<WarmSandbox> {
    if (!this.backend) return Promise.reject(new ApiError(503, `the code sandbox cannot isolate code here, so it runs none: ${this.unavailableReason}`));
    const s = this.ready.shift();
    if (s) {
      this.inUse.add(s);
      this.refill();
      return Promise.resolve(s);
    }
    return new Promise<WarmSandbox>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (got) => {
          clearTimeout(waiter.timer);
          resolve(got);
        },
        reject,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          const why = this.lastFailure && this.failures > 0 ? `; the last sandbox failed to start: ${this.lastFailure}` : '';
          reject(new ApiError(503, `no sandbox available after waiting ${this.config.waitMs / 1000} seconds${why}`, { 'Retry-After': '1' }));
        }, this.config.waitMs),
      };
      this.waiters.push(waiter);
      this.refill();
    });
  }

  /** Destroys a sandbox after its one run and starts a replacement. */
  async release(s: WarmSandbox): Promise<void> {
    // Its run is over (the answer may already be on its way): no longer in flight while it is torn down.
    this.inUse.delete(s);
    this.refill();
    await s.destroy();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new ApiError(503, 'the daemon is stopping'));
    }
    await Promise.all([...this.ready.splice(0), ...this.starting, ...this.inUse].map((s) => s.destroy()));
  }

  private live(): number {
    return this.ready.length + this.starting.size + this.inUse.size;
  }

  private refill(): void {
    if (this.stopped || !this.backend || this.retryTimer) return;
    while (this.ready.length + this.starting.size < this.config.poolTarget + this.waiters.length && this.live() < this.config.maxLive) this.startOne(this.backend);
  }

  private startOne(backend: Backend): void {
    const id = newSandboxId();
    const s = new WarmSandbox(id, backend.warm(id));
    this.starting.add(s);
    this.createdTotal++;
    s.ready.then(
      () => {
        this.starting.delete(s);
        this.failures = 0;
        if (this.stopped) return void s.destroy();
        // A sandbox that dies while waiting (killed from outside) leaves the pool.
        void s.child.exited.then(() => {
          const at = this.ready.indexOf(s);
          if (at >= 0) {
            this.ready.splice(at, 1);
            this.refill();
          }
        });
        const w = this.waiters.shift();
        if (w) {
          this.inUse.add(s);
          w.resolve(s);
        } else this.ready.push(s);
      },
      (e: Error) => {
        this.starting.delete(s);
        this.failures++;
        this.lastFailure = e.message;
        this.log.warn('sandbox failed to start', { sandbox_id: id, error: e.message });
        // Back off so a broken machine does not spin starting sandboxes.
        const delay = Math.min(5_000, 100 * 2 ** Math.min(this.failures, 6));
        this.retryTimer ??= setTimeout(() => {
          this.retryTimer = undefined;
          this.refill();
        }, delay);
        this.retryTimer.unref();
      },
    );
  }
}
