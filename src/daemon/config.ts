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
  /** Vector indexes (spec 3 §2.1, §8): readiness delay, count refresh, default width, search planner. */
  vector: {
    readyDelayMs: number;
    countRefreshMs: number;
    defaultDimensions: number;
    exactMaxPoints: number;
    exactMaxCandidates: number;
    ef: number;
  };
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
    vector: {
      readyDelayMs: num(env.PLATFORM_VECTOR_READY_DELAY_MS, 250),
      countRefreshMs: num(env.PLATFORM_VECTOR_COUNT_REFRESH_SECONDS, 300) * 1000,
      defaultDimensions: num(env.PLATFORM_VECTOR_DEFAULT_DIMENSIONS, 768),
      exactMaxPoints: num(env.PLATFORM_VECTOR_EXACT_MAX_POINTS, 256),
      exactMaxCandidates: num(env.PLATFORM_VECTOR_EXACT_MAX_CANDIDATES, 2048),
      ef: num(env.PLATFORM_VECTOR_EF, 128),
    },
    ...overrides,
  };
}
