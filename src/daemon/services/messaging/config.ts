/** Messaging knobs; every one has the spec's default and an environment fallback. */
export interface MessagingConfig {
  /** Project Pub/Sub storage budget in bytes (spec 3 §8: 1 GiB). */
  projectBudgetBytes: number;
  /** Topics per project (spec 3 §8: 100). */
  maxTopicsPerProject: number;
  /** Consumers (and producers) per topic (spec 3 §8: 100 each). */
  maxConsumersPerTopic: number;
  /** Delay before the broker "converges" a new topic or subscription (pending -> ready). */
  convergeDelayMs: number;
  /** How often the retention sweep expires messages past max_age. */
  retentionSweepMs: number;
  /** A consumer that has not pulled for this long no longer counts as connected. */
  consumerTtlMs: number;
  /** Push retry backoff: base doubling to max (spec 3 §6: 1 s doubling to 60 s). */
  pushBackoffBaseMs: number;
  pushBackoffMaxMs: number;
  /** When > 0, replaces ack_deadline_seconds as the push request timeout (tests use short values). */
  pushTimeoutMs: number;
  /** Concurrent deliveries per push subscription (also bounded by max_ack_pending). */
  pushConcurrency: number;
  /**
   * Local development: accept push URLs on loopback (127.0.0.1, localhost, ::1) besides workloads
   * of the project. Off by default: the spec only allows workloads of the same project.
   */
  allowLoopbackPush: boolean;
  /**
   * Interval of the WAL checkpoints the broker runs in a worker thread instead of SQLite's
   * auto-checkpoint inside a commit (which stalled the request that crossed 1000 pages).
   * 0 keeps SQLite's auto-checkpoint.
   */
  walCheckpointMs: number;
}

const num = (v: string | undefined, d: number) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : d);

export function messagingConfig(env: NodeJS.ProcessEnv): MessagingConfig {
  return {
    projectBudgetBytes: num(env.PLATFORM_PUBSUB_BUDGET_BYTES, 1024 ** 3),
    maxTopicsPerProject: num(env.PLATFORM_PUBSUB_MAX_TOPICS, 100),
    maxConsumersPerTopic: num(env.PLATFORM_PUBSUB_MAX_CONSUMERS, 100),
    convergeDelayMs: num(env.PLATFORM_PUBSUB_CONVERGE_MS, 0),
    retentionSweepMs: num(env.PLATFORM_PUBSUB_RETENTION_SWEEP_MS, 10_000),
    consumerTtlMs: num(env.PLATFORM_PUBSUB_CONSUMER_TTL_MS, 60_000),
    pushBackoffBaseMs: num(env.PLATFORM_PUBSUB_PUSH_BACKOFF_BASE_MS, 1_000),
    pushBackoffMaxMs: num(env.PLATFORM_PUBSUB_PUSH_BACKOFF_MAX_MS, 60_000),
    pushTimeoutMs: num(env.PLATFORM_PUBSUB_PUSH_TIMEOUT_MS, 0),
    pushConcurrency: num(env.PLATFORM_PUBSUB_PUSH_CONCURRENCY, 8),
    allowLoopbackPush: (env.PLATFORM_PUBSUB_ALLOW_LOOPBACK_PUSH ?? 'false').toLowerCase() === 'true',
    walCheckpointMs: num(env.PLATFORM_PUBSUB_WAL_CHECKPOINT_MS, 100),
  };
}
