/** Trigger knobs, each with an environment fallback (docs/decisions/triggers.md). */
export interface TriggersConfig {
  /** Finished firings kept per trigger (older ones are pruned): PLATFORM_TRIGGERS_HISTORY. */
  historyLimit: number;
  /** One attempt's deadline, headers and body: PLATFORM_TRIGGERS_TIMEOUT_MS. */
  attemptTimeoutMs: number;
  /** Deliveries in flight at once across all triggers: PLATFORM_TRIGGERS_CONCURRENCY. */
  concurrency: number;
  /** A schedule run missed while the daemon was down fires once on start if it fell due within this: PLATFORM_TRIGGERS_CATCHUP_WINDOW_SECONDS. */
  catchupWindowMs: number;
  /** A file copied into a bucket fires once its size and mtime held still this long: PLATFORM_TRIGGERS_OBJECT_SETTLE_MS. */
  objectSettleMs: number;
  /**
   * TEST ONLY. PLATFORM_TRIGGERS_TEST_CLOCK=<RFC 3339 time>[@<rate>]: the triggers area's clock
   * starts at that time when the daemon starts and runs `rate` times faster than real time
   * (default 1). Nothing else in the daemon sees it. Unset in normal use.
   */
  testClock?: { startMs: number; rate: number };
}

const num = (v: string | undefined, d: number) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : d);

export function parseTestClock(v: string | undefined): TriggersConfig['testClock'] {
  if (!v) return undefined;
  const [at, rate] = v.split('@');
  const startMs = Date.parse(at!);
  const r = rate === undefined ? 1 : Number(rate);
  if (!Number.isFinite(startMs) || !(r > 0)) throw new Error(`PLATFORM_TRIGGERS_TEST_CLOCK must be <RFC 3339 time>[@<rate>], got ${v}`);
  return { startMs, rate: r };
}

export function triggersConfig(env: NodeJS.ProcessEnv): TriggersConfig {
  const testClock = parseTestClock(env.PLATFORM_TRIGGERS_TEST_CLOCK);
  return {
    historyLimit: Math.max(1, num(env.PLATFORM_TRIGGERS_HISTORY, 100)),
    attemptTimeoutMs: Math.max(10, num(env.PLATFORM_TRIGGERS_TIMEOUT_MS, 60_000)),
    concurrency: Math.max(1, num(env.PLATFORM_TRIGGERS_CONCURRENCY, 32)),
    catchupWindowMs: Math.max(0, num(env.PLATFORM_TRIGGERS_CATCHUP_WINDOW_SECONDS, 86_400)) * 1000,
    objectSettleMs: Math.max(0, num(env.PLATFORM_TRIGGERS_OBJECT_SETTLE_MS, 150)),
    ...(testClock ? { testClock } : {}),
  };
}
