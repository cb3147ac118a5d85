import { VECTOR_LIMITS, type VectorSettings } from '../api/vector.js';
import { LOG_TAIL_DEFAULT, LOG_TAIL_MAX } from '../api/serverless.js';
import { parseEgressAllow } from './egress.js';
import type { RateLimitConfig } from './http/rate-limit.js';
import { isolationModeFromEnv, type IsolationMode } from './runtime/sandbox.js';
import { cacheConfig, type CacheConfig } from './services/cache/config.js';
import { messagingConfig, type MessagingConfig } from './services/messaging/config.js';
import { triggersConfig, type TriggersConfig } from './services/triggers/config.js';
import { sandboxConfig, type SandboxConfig } from './services/sandbox/config.js';
import { stateHome } from './state-home.js';

export interface DaemonConfig {
  /** State directory: platform.db, builds/, workloads/, logs/, cache/, keys/. */
  home: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * PLATFORM_INTERNAL_PORT: the internal loopback listener (private MCP servers' addresses,
   * reachable only by workloads and the daemon); 0 picks a free port, set to the real one once listening.
   */
  internalPort: number;
  /** PLATFORM_MCP_REQUEST_TIMEOUT: the MCP protocol endpoint's request timeout in seconds (default 60, clamped to 900). */
  mcpRequestTimeoutSeconds: number;
  version: string;
  rateLimit: RateLimitConfig;
  signIn: { perIp: number; perAccount: number; windowMs: number };
  /**
   * Sign-in sessions (docs/decisions/signin.md): PLATFORM_SESSION_TTL_SECONDS for the session
   * token (spec 1 §8: 12 hours), PLATFORM_SESSION_REFRESH_TTL_SECONDS for its refresh token (30 days).
   */
  sessions: { ttlSeconds: number; refreshTtlSeconds: number };
  /** Device sign-in (RFC 8628): PLATFORM_DEVICE_CODE_TTL_SECONDS (600) and PLATFORM_DEVICE_POLL_INTERVAL_SECONDS (5). */
  device: { ttlSeconds: number; intervalSeconds: number };
  /** PLATFORM_PUBLIC_URL: the address people reach the platform at (device approval links); default the daemon's own. */
  publicUrl?: string;
  /** INVOKE_AUTH_REQUIRED (spec 1 §5); default true. */
  invokeAuthRequired: boolean;
  admin: { email?: string; password?: string };
  /** Agents and functions: builds, drivers, instances (spec 1 §8, DESIGN.md runtime drivers). */
  workloads: WorkloadConfig;
  cache: CacheConfig;
  messaging: MessagingConfig;
  /** Triggers (spec 2 §4.4): history bound, attempt deadline, catch-up window, the test-only clock. */
  triggers: TriggersConfig;
  /** The code sandbox (spec 2 §4.6, §8): its listener, isolation mode and warm pool. */
  sandbox: SandboxConfig;
  /** Project secret store (spec 2 §4.1): `local` (sealed values in the database) or `off` (503). */
  secretsStore: 'local' | 'off';
  /** The HTTP edge against slow and greedy clients (docs/decisions.md, HTTP edge). */
  http: HttpEdgeConfig;
  /** Vector indexes (spec 3 §2.1, §8): readiness delay, count refresh, default width, search planner. */
  vector: {
    readyDelayMs: number;
    countRefreshMs: number;
    defaultDimensions: number;
    exactMaxPoints: number;
    exactMaxCandidates: number;
    ef: number;
    /** The search beam grows from `ef` at half this many points to twice `ef` here (docs/decisions/vector.md). */
    wideEfFromPoints: number;
    /** How often whole graphs with enough changes are saved to disk (docs/decisions/vector.md). */
    graphSaveMs: number;
    /** The limits spec 3 §8 names as settings: MAX_POINTS_PER_REQUEST, MAX_BODY_BYTES, MAX_TOP_K. */
    limits: VectorSettings;
    /**
     * PLATFORM_QDRANT_PORT: the direct routes without their prefix on a loopback port of their own
     * (docs/decisions/vector.md); unset means no such listener, 0 picks a free port.
     */
    qdrantPort?: number;
    /**
     * PLATFORM_VECTOR_TEST_PAUSE_GRAPH_BUILD=1, for tests only: graphs are never built, so upserted
     * points stay beside the graph (searched exactly) and a crash can be staged mid-build.
     */
    pauseGraphBuild?: boolean;
  };
  /** The gateway (spec 2 §2.5, §4.5; docs/decisions/gateway.md). */
  gateway: GatewayConfig;
  /** PLATFORM_APPS_DOMAIN: workloads answer at `<name>-<short>.<appsDomain>` (default apps.localhost). */
  appsDomain: string;
  /** `platform server start` (docs/decisions/server.md); undefined for the detached local daemon. */
  server?: ServerModeConfig;
}

/**
 * Serving a team. `host` and `port` above stay the loopback listener workloads call (SVC_API_URL);
 * the public listener is this one, and is the same socket when it is plain http on loopback.
 */
export interface ServerModeConfig {
  listenHost: string;
  listenPort: number;
  tls?: { certFile: string; keyFile: string };
  /** --public-url: the address people use (links, workload addresses); empty: the listen address (publicUrlOf). */
  publicUrl: string;
  /** CIDRs of the reverse proxy whose X-Forwarded-* headers are believed. */
  behindProxy: string[];
  /** How long a SIGTERM waits for in-flight requests and streams before stopping workloads. */
  shutdownTimeoutMs: number;
}

export interface GatewayConfig {
  /** PLATFORM_GATEWAY_DOMAIN: the shared zone; endpoints answer at `<name>-<short>.<domain>`. */
  domain: string;
  /** PLATFORM_GATEWAY_DNS: resolvers (host:port, comma separated) the domain sweep asks; empty: the system's. */
  dnsServers: string[];
  /** PLATFORM_GATEWAY_VERIFY_SECONDS: how often unverified domains are resolved. */
  verifyIntervalMs: number;
  /** PLATFORM_GATEWAY_TRUSTED_PROXIES: CIDRs whose X-Forwarded-For is believed for the client address. */
  trustedProxies: string[];
  /** PLATFORM_GATEWAY_KEY_OVERLAP_SECONDS: how long a rotated-out key keeps working (default 24 h). */
  keyOverlapSeconds: number;
  /** PLATFORM_GATEWAY_JWKS_COOLDOWN_MS: least time between two fetches of one key set (an unknown kid refetches). */
  jwksCooldownMs: number;
  /** PLATFORM_GATEWAY_JWKS_MAX_AGE_SECONDS: a key set older than this is fetched again. */
  jwksMaxAgeSeconds: number;
  /** PLATFORM_GATEWAY_CLOCK_SKEW_SECONDS: tolerance on exp and nbf. */
  clockSkewSeconds: number;
  /** PLATFORM_GATEWAY_TIMEOUT_SECONDS: a target that does not start answering in this time is a 504. */
  targetTimeoutSeconds: number;
  /** PLATFORM_EGRESS_ALLOW: `host:port` exceptions to the egress policy, which jwks_uri fetches obey too. */
  egressAllow: Set<string>;
}

const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);

export function gatewayConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  return {
    domain: (env.PLATFORM_GATEWAY_DOMAIN || 'gw.localhost').toLowerCase().replace(/\.$/, ''),
    dnsServers: list(env.PLATFORM_GATEWAY_DNS),
    verifyIntervalMs: num(env.PLATFORM_GATEWAY_VERIFY_SECONDS, 60) * 1000,
    trustedProxies: list(env.PLATFORM_GATEWAY_TRUSTED_PROXIES),
    keyOverlapSeconds: num(env.PLATFORM_GATEWAY_KEY_OVERLAP_SECONDS, 24 * 3600),
    jwksCooldownMs: num(env.PLATFORM_GATEWAY_JWKS_COOLDOWN_MS, 30_000),
    jwksMaxAgeSeconds: num(env.PLATFORM_GATEWAY_JWKS_MAX_AGE_SECONDS, 600),
    clockSkewSeconds: num(env.PLATFORM_GATEWAY_CLOCK_SKEW_SECONDS, 60),
    targetTimeoutSeconds: num(env.PLATFORM_GATEWAY_TIMEOUT_SECONDS, 60),
    egressAllow: parseEgressAllow(env.PLATFORM_EGRESS_ALLOW),
  };
}

/** The loopback listener's base URL: what workloads call (SVC_API_URL), never the public one. */
export const loopbackBaseUrl = (c: Pick<DaemonConfig, 'host' | 'port'>) => `http://${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`;

export interface HttpEdgeConfig {
  /** The request line and headers must arrive within this (Node's default is 60 s). */
  headersTimeoutSeconds: number;
  /** The whole request, body included, must arrive within this; responses are not bounded by it. */
  requestTimeoutSeconds: number;
  /** Open connections beyond this are closed on accept. */
  maxConnections: number;
}

export function httpEdgeConfig(env: NodeJS.ProcessEnv): HttpEdgeConfig {
  const headersTimeoutSeconds = Math.max(1, num(env.PLATFORM_HTTP_HEADERS_TIMEOUT_SECONDS, 10));
  return {
    headersTimeoutSeconds,
    requestTimeoutSeconds: Math.max(headersTimeoutSeconds, num(env.PLATFORM_HTTP_REQUEST_TIMEOUT_SECONDS, 120)),
    maxConnections: Math.max(16, num(env.PLATFORM_HTTP_MAX_CONNECTIONS, 1024)),
  };
}

export interface WorkloadConfig {
  driver: 'process' | 'docker';
  /** PLATFORM_ISOLATION / `daemon start --isolation`: `sandbox` (bubblewrap) or the opt-out `none`. */
  isolation: IsolationMode;
  /**
   * PLATFORM_EGRESS_ALLOW: `host:port` list of exceptions to the egress policy of serverless
   * instances' doors (a loopback server the operator means them to reach).
   */
  egressAllow?: string;
  buildConcurrency: number;
  /** Build time limit, counted from the claim: queued time does not count (spec 1 §3). */
  buildTimeoutMs: number;
  /** A build still queued after this fails with "never started" (spec 1 §8.5: 30 minutes). */
  buildQueueWaitMs: number;
  /** A running build claim older than this may be taken over by a new deploy (30 minutes). */
  staleClaimMs: number;
  /** Scale to zero after this much idle time (about 90 s). */
  idleMs: number;
  /** How long deploying may stay not ready before failing (two minutes). */
  deployTimeoutMs: number;
  /** First restart delay after a crash; doubles per consecutive crash. */
  restartBackoffMs: number;
  portMin: number;
  portMax: number;
  /** MAX_UPLOAD_BYTES: 100 MiB plus 1 MiB slack. */
  maxUploadBytes: number;
  /** LOG_RETENTION: persisted agent logs (14 days). */
  logRetentionMs: number;
  /** LOG_TAIL_LINES: a serverless log read's default tail (spec 2 §8: 500, at most 10000). */
  logTailLines: number;
  /** Base image per runtime for the docker driver. */
  dockerImages: Record<'python' | 'nodejs' | 'go' | 'ruby', string>;
  /** Python installs: PLATFORM_PIP_FIND_LINKS builds offline from a folder of wheels (pip --find-links DIR --no-index). */
  pip: { findLinks?: string };
  /** Platform model defaults injected into workloads (spec 1 §4.12). */
  model: { baseUrl: string; chatModel: string; embedModel: string; embedBaseUrl: string; apiKey: string };
}

/** LOG_RETENTION accepts seconds or a number with a unit (30s, 12h, 14d). */
const duration = (v: string | undefined, dMs: number) => {
  const m = /^(\d+)([smhd]?)$/.exec((v ?? '').trim());
  if (!m) return dMs;
  return Number(m[1]) * { '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
};

export function workloadConfigFromEnv(env: NodeJS.ProcessEnv): WorkloadConfig {
  return {
    driver: env.PLATFORM_DRIVER === 'docker' ? 'docker' : 'process',
    isolation: isolationModeFromEnv(env),
    egressAllow: env.PLATFORM_EGRESS_ALLOW || undefined,
    buildConcurrency: Math.max(1, num(env.PLATFORM_BUILD_CONCURRENCY, 2)),
    buildTimeoutMs: num(env.PLATFORM_BUILD_TIMEOUT_SECONDS, 20 * 60) * 1000,
    buildQueueWaitMs: num(env.PLATFORM_BUILD_QUEUE_WAIT_SECONDS, 30 * 60) * 1000,
    staleClaimMs: num(env.PLATFORM_BUILD_STALE_CLAIM_SECONDS, 30 * 60) * 1000,
    idleMs: num(env.PLATFORM_SCALE_TO_ZERO_SECONDS, 90) * 1000,
    deployTimeoutMs: num(env.PLATFORM_DEPLOY_TIMEOUT_SECONDS, 120) * 1000,
    restartBackoffMs: num(env.PLATFORM_RESTART_BACKOFF_MS, 500),
    portMin: num(env.PLATFORM_WORKLOAD_PORT_MIN, 20000),
    portMax: num(env.PLATFORM_WORKLOAD_PORT_MAX, 29999),
    maxUploadBytes: num(env.MAX_UPLOAD_BYTES, 101 * 1024 * 1024),
    logRetentionMs: duration(env.LOG_RETENTION, 14 * 86_400_000),
    logTailLines: Math.min(LOG_TAIL_MAX, Math.max(1, num(env.LOG_TAIL_LINES, LOG_TAIL_DEFAULT))),
    dockerImages: {
      python: env.PLATFORM_DOCKER_IMAGE_PYTHON || 'python:3.12-slim',
      nodejs: env.PLATFORM_DOCKER_IMAGE_NODEJS || 'node:22-slim',
      go: env.PLATFORM_DOCKER_IMAGE_GO || 'golang:1.23',
      ruby: env.PLATFORM_DOCKER_IMAGE_RUBY || 'ruby:3.3-slim',
    },
    pip: { findLinks: env.PLATFORM_PIP_FIND_LINKS || undefined },
    model: {
      baseUrl: env.PLATFORM_MODEL_BASE_URL ?? '',
      chatModel: env.PLATFORM_CHAT_MODEL ?? '',
      embedModel: env.PLATFORM_EMBED_MODEL ?? '',
      embedBaseUrl: env.PLATFORM_EMBED_BASE_URL ?? '',
      apiKey: env.PLATFORM_MODEL_API_KEY ?? '',
    },
  };
}

const num = (v: string | undefined, d: number) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : d);

export const defaultHome = () => stateHome(process.env);

/** Reads the daemon's settings from the environment; every knob has the spec's default. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<DaemonConfig> = {}): DaemonConfig {
  return {
    home: stateHome(env),
    host: '127.0.0.1',
    port: num(env.PLATFORM_PORT, 7070),
    internalPort: num(env.PLATFORM_INTERNAL_PORT, 0),
    mcpRequestTimeoutSeconds: Math.min(900, Math.max(1, num(env.PLATFORM_MCP_REQUEST_TIMEOUT, 60))),
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
    sessions: {
      ttlSeconds: Math.max(1, num(env.PLATFORM_SESSION_TTL_SECONDS, 12 * 3600)),
      refreshTtlSeconds: Math.max(60, num(env.PLATFORM_SESSION_REFRESH_TTL_SECONDS, 30 * 86_400)),
    },
    device: {
      ttlSeconds: Math.max(1, num(env.PLATFORM_DEVICE_CODE_TTL_SECONDS, 600)),
      intervalSeconds: Math.max(1, num(env.PLATFORM_DEVICE_POLL_INTERVAL_SECONDS, 5)),
    },
    ...(env.PLATFORM_PUBLIC_URL ? { publicUrl: env.PLATFORM_PUBLIC_URL.replace(/\/$/, '') } : {}),
    invokeAuthRequired: (env.INVOKE_AUTH_REQUIRED ?? 'true').toLowerCase() !== 'false',
    admin: { email: env.PLATFORM_ADMIN_EMAIL || undefined, password: env.PLATFORM_ADMIN_PASSWORD || undefined },
    cache: cacheConfig(env),
    workloads: workloadConfigFromEnv(env),
    messaging: messagingConfig(env),
    triggers: triggersConfig(env),
    sandbox: sandboxConfig(env),
    secretsStore: env.PLATFORM_SECRETS_STORE === 'off' ? 'off' : 'local',
    http: httpEdgeConfig(env),
    vector: {
      readyDelayMs: num(env.PLATFORM_VECTOR_READY_DELAY_MS, 250),
      countRefreshMs: num(env.PLATFORM_VECTOR_COUNT_REFRESH_SECONDS, 300) * 1000,
      defaultDimensions: num(env.PLATFORM_VECTOR_DEFAULT_DIMENSIONS, 768),
      exactMaxPoints: num(env.PLATFORM_VECTOR_EXACT_MAX_POINTS, 256),
      exactMaxCandidates: num(env.PLATFORM_VECTOR_EXACT_MAX_CANDIDATES, 2048),
      ef: num(env.PLATFORM_VECTOR_EF, 128),
      wideEfFromPoints: num(env.PLATFORM_VECTOR_WIDE_EF_FROM_POINTS, 250_000),
      graphSaveMs: num(env.PLATFORM_VECTOR_GRAPH_SAVE_SECONDS, 60) * 1000,
      limits: {
        pointsPerUpsert: num(env.MAX_POINTS_PER_REQUEST, VECTOR_LIMITS.pointsPerUpsert),
        bodyBytes: num(env.MAX_BODY_BYTES, VECTOR_LIMITS.bodyBytes),
        topKMax: num(env.MAX_TOP_K, VECTOR_LIMITS.topKMax),
      },
      ...(env.PLATFORM_QDRANT_PORT ? { qdrantPort: num(env.PLATFORM_QDRANT_PORT, 6333) } : {}),
      ...(env.PLATFORM_VECTOR_TEST_PAUSE_GRAPH_BUILD === '1' ? { pauseGraphBuild: true } : {}),
    },
    gateway: gatewayConfig(env),
    appsDomain: (env.PLATFORM_APPS_DOMAIN || 'apps.localhost').toLowerCase().replace(/\.$/, ''),
    ...overrides,
  };
}
