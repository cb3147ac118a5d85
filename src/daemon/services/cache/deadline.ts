import { ApiError } from '../../http/errors.js';

/**
 * The cache request timeout (spec 3 §8: 30 s, setting REQUEST_TIMEOUT_SECONDS), shared by the
 * steps of one request that wait on the provisioning system (driver checks, the docker engine).
 * A step still running at the deadline fails the request with 502, the spec's status for a
 * provisioning system failure; the request commits nothing after that.
 */
export class RequestDeadline {
  private readonly until: number;

  constructor(private readonly ms: number) {
    this.until = Date.now() + ms;
  }

  private timedOut(what: string): ApiError {
    return new ApiError(502, `${what}: the provisioning system did not answer within the ${this.ms / 1000} s request timeout`);
  }

  /** Awaits one step; `what` prefixes the 502 message ("provisioning failed", "delete failed"). */
  async step<T>(what: string, work: Promise<T>): Promise<T> {
    return withTimeout(work, this.until - Date.now(), () => this.timedOut(what));
  }

  /** Throws the 502 when the deadline has passed (called right before a commit). */
  check(what: string): void {
    if (Date.now() >= this.until) throw this.timedOut(what);
  }
}

/** Settles like `work`, or rejects with `onTimeout()` after `ms`; the work itself is not cancelled. */
export async function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, ms));
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
