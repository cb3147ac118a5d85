import { homedir } from 'node:os';
import { join } from 'node:path';
import type { RateLimitConfig } from './http/rate-limit.js';

export interface DaemonConfig {
  /** State directory: platform.db, builds/, workloads/, logs/, cache/, keys/. */
  home: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  version: string;
  rateLimit: RateLimitConfig;
  signIn: { perIp: number; perAccount: number; windowMs: number };
  /** INVOKE_AUTH_REQUIRED (spec 1 §5); default true. */
  invokeAuthRequired: boolean;
  admin: { email?: string; password?: string };
  cache: CacheConfig;
}

/** Cache instances (spec 3 §4.2); timers are knobs so tests need no real waiting. */
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
  statsBudgetMs: number;
  /** Test knob: delay before the restart that applies a rotated password (default 0: at once). */
  rotateRestartDelayMs: number;
  /** Stop instances on a graceful daemon stop instead of leaving them for re-adoption. */
  stopOnExit: boolean;
}

const num = (v: string | undefined, d: number) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : d);

export const defaultHome = () => process.env.PLATFORM_HOME || join(homedir(), '.platform');

/** Reads the daemon's settings from the environment; every knob has the spec's default. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<DaemonConfig> = {}): DaemonConfig {
  return {
    home: env.PLATFORM_HOME || join(homedir(), '.platform'),
    host: '127.0.0.1',
    port: num(env.PLATFORM_PORT, 7070),
    version: env.PLATFORM_VERSION ?? '0.1.0',
    rateLimit: {
      burst: num(env.PLATFORM_RATE_LIMIT_BURST, 600),
      refillPerSecond: num(env.PLATFORM_RATE_LIMIT_PER_SECOND, 100),
    },
    signIn: {
      perIp: num(env.PLATFORM_SIGNIN_LIMIT_PER_IP, 10),
      perAccount: num(env.PLATFORM_SIGNIN_LIMIT_PER_ACCOUNT, 50),
      windowMs: num(env.PLATFORM_SIGNIN_WINDOW_SECONDS, 15 * 60) * 1000,
    },
    invokeAuthRequired: (env.INVOKE_AUTH_REQUIRED ?? 'true').toLowerCase() !== 'false',
    admin: { email: env.PLATFORM_ADMIN_EMAIL, password: env.PLATFORM_ADMIN_PASSWORD },
    cache: {
      driver: env.PLATFORM_CACHE_DRIVER === 'docker' ? 'docker' : 'process',
      serverBin: env.PLATFORM_REDIS_SERVER || 'redis-server',
      dockerImage: env.PLATFORM_CACHE_DOCKER_IMAGE || 'platform-redis:local',
      maxmemoryOverride: env.PLATFORM_CACHE_MAXMEMORY_OVERRIDE || undefined,
      healthIntervalMs: num(env.PLATFORM_CACHE_HEALTH_INTERVAL_MS, 2000),
      startTimeoutMs: num(env.PLATFORM_CACHE_START_TIMEOUT_MS, 15_000),
      restartBackoffMs: num(env.PLATFORM_CACHE_RESTART_BACKOFF_MS, 1000),
      statsBudgetMs: num(env.PLATFORM_CACHE_STATS_BUDGET_MS, 3000),
      rotateRestartDelayMs: num(env.PLATFORM_CACHE_ROTATE_RESTART_DELAY_MS, 0),
      stopOnExit: env.PLATFORM_CACHE_STOP_ON_EXIT === '1' || env.PLATFORM_CACHE_STOP_ON_EXIT === 'true',
    },
    ...overrides,
  };
}
