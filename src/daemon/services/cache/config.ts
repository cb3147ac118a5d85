/** Cache instance knobs (spec 3 §4.2, §8); timers are knobs so tests need no real waiting. */
export interface CacheConfig {
  /** process (redis-server children) or docker (containers with host networking). */
  driver: 'process' | 'docker';
  serverBin: string;
  dockerImage: string;
  /** Test knob: a tiny maxmemory (e.g. "4mb") written instead of the size class's, so eviction is fast. */
  maxmemoryOverride?: string;
  healthIntervalMs: number;
  startTimeoutMs: number;
  restartBackoffMs: number;
  /** Stats read budget (spec 3 §8: 3 s). */
  statsBudgetMs: number;
  /** Cache request timeout (spec 3 §8: 30 s, setting REQUEST_TIMEOUT_SECONDS). */
  requestTimeoutMs: number;
  /** Test knob: delay before the restart that applies a rotated password (default 0: at once). */
  rotateRestartDelayMs: number;
  /**
   * Stop instances on a graceful daemon stop (default, issue 16: `daemon stop` stops everything
   * the daemon started); off (`PLATFORM_CACHE_STOP_ON_EXIT=0`) leaves them for re-adoption.
   */
  stopOnExit: boolean;
}

const num = (v: string | undefined, d: number) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : d);

export function cacheConfig(env: NodeJS.ProcessEnv): CacheConfig {
  return {
    driver: env.PLATFORM_CACHE_DRIVER === 'docker' ? 'docker' : 'process',
    serverBin: env.PLATFORM_REDIS_SERVER || 'redis-server',
    dockerImage: env.PLATFORM_CACHE_DOCKER_IMAGE || 'platform-redis:local',
    maxmemoryOverride: env.PLATFORM_CACHE_MAXMEMORY_OVERRIDE || undefined,
    healthIntervalMs: num(env.PLATFORM_CACHE_HEALTH_INTERVAL_MS, 2000),
    startTimeoutMs: num(env.PLATFORM_CACHE_START_TIMEOUT_MS, 15_000),
    restartBackoffMs: num(env.PLATFORM_CACHE_RESTART_BACKOFF_MS, 1000),
    statsBudgetMs: num(env.PLATFORM_CACHE_STATS_BUDGET_MS, 3000),
    // The spec names the setting REQUEST_TIMEOUT_SECONDS; the prefixed millisecond form is for tests.
    requestTimeoutMs: num(env.PLATFORM_CACHE_REQUEST_TIMEOUT_MS, num(env.REQUEST_TIMEOUT_SECONDS, 30) * 1000),
    rotateRestartDelayMs: num(env.PLATFORM_CACHE_ROTATE_RESTART_DELAY_MS, 0),
    stopOnExit: !['0', 'false', 'no', 'off'].includes((env.PLATFORM_CACHE_STOP_ON_EXIT ?? '').toLowerCase()),
  };
}
