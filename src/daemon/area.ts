import type { Db } from './store/db.js';
import type { HealthDependency } from '../api/health.js';
import type { Clock } from './clock.js';
import type { DaemonConfig } from './config.js';
import type { Pager } from './http/paging.js';
import type { RequestContext, Router } from './http/router.js';
import type { SessionTokens } from './services/auth/session-tokens.js';
import type { Logger } from './logger.js';
import type { Principal } from './services/auth/principal.js';
import type { SearchKind } from '../api/search.js';
import type { MetricsReader } from './metrics/daemon-metrics.js';
import type { WorkloadKind } from './metrics/gauges.js';
import type { Startup } from './startup.js';

/** Shared services every area receives; areas never reach into each other's stores. */
export interface AreaContext {
  db: Db;
  clock: Clock;
  config: DaemonConfig;
  pager: Pager;
  sessions: SessionTokens;
  log: Logger;
  hooks: Hooks;
  /** The start after listening: areas count the workloads they bring back here (startup.ts). */
  startup: Startup;
}

/**
 * Cross-area questions answered by whichever area owns the data (agents answer "does this
 * project still have agents?"), so the accounts area does not import the agents store.
 */
export interface Hooks {
  /** Names of resources that block deleting a project, e.g. "3 agents". */
  projectDependents: Array<(projectId: string) => string | undefined>;
  /** Agent names per project visible in user views (spec 1 §2.4), and unowned agents. */
  agentNames: Array<(projectIds: string[]) => string[]>;
  unownedAgents: Array<() => string[]>;
  /**
   * Who holds a workload name in a project ("serverless service web"), for the areas whose names
   * share the public address <name>-<short>.apps…; undefined when that area does not use it.
   */
  nameInUse: Array<(projectId: string, name: string) => string | undefined>;
  /** Live use of a project's quota resources (spec 1 §8.3 names, e.g. instances, cpu_limits), by area. */
  quotaUsage: Array<(projectId: string) => { source: string; used: Partial<Record<string, number>> }>;
  /**
   * Requests routed by Host header before the path router (workload public addresses such as
   * `<name>-<short>.apps.localhost`): the first whose `matches` is true serves the request.
   */
  hostRoutes: Array<{
    matches(host: string): boolean;
    serve(ctx: RequestContext): Promise<void>;
    /**
     * The route authenticates and rate-limits its callers itself (the gateway: its endpoints'
     * keys, JWTs and limits), so no platform credential is resolved and no platform bucket taken.
     */
    ownEdge?: boolean;
  }>;
  /**
   * Requests routed by path prefix before the router, with no platform credential resolved (the
   * MCP protocol endpoint checks its own bearer). `internal` is true on the internal listener,
   * which serves nothing else.
   */
  pathRoutes: Array<{ matches(path: string): boolean; serve(ctx: RequestContext, internal: boolean): Promise<void> }>;
  /**
   * Set by the agents area: forwards a request to an agent or function of the project the way its
   * public address does (instance secret, cold start, timeouts), with no invoke gate: the gateway's
   * endpoint authenticated the caller. 404 when no workload of that name and kind serves.
   */
  agentForward?: (ctx: RequestContext, projectId: string, name: string, kind: 'agent' | 'function') => Promise<void>;
  /** Set by the sessions area: history and memories for an invoke, and the record of its turn. */
  agentSessions?: AgentSessionsHook;
  /** Told of every finished invoke of an agent or function (metrics and users, issue 23). */
  invokeObservers: Array<(e: InvokeRecord) => void>;
  /**
   * Set by the agents area: an anonymous invoke of an agent of the project, exactly as
   * POST /v1/agents/{name}/invoke serves one (body rules, timeouts, observers); the caller (the
   * embed widget's route) has done its own checks.
   */
  invokeAgent?: (c: RequestContext, projectId: string, name: string, asEndUser?: EndUserOf) => Promise<void>;
  /** Set by the agents area: running instances of one agent now. */
  agentInstances?: (agentId: string) => number;
  /**
   * Set by the agents area: stops every running instance of the agent (each revision a traffic
   * split serves too), so the next request starts one with the settings of now.
   */
  recycleAgent?: (agentId: string, why: string) => Promise<void>;
  /**
   * Names an area offers to the cross-resource search (spec 1 §4.11), each area for its own
   * resources: only within `scope.projects`, which the search area has already checked.
   */
  searchables: Array<(scope: SearchScope, needle: string, limit: number) => SearchableName[]>;
  /**
   * Set by the agents area: resolves project and agent of a per-agent route and applies the owner
   * gate (404 for an unknown or someone else's agent), for areas that hang data off an agent.
   */
  ownedAgent?: (principal: Principal, name: string, projectRef: string | undefined) => OwnedAgentRef;
  /**
   * Set by the agents area: the agent a workload key belongs to, when it is the one named (a
   * workload reaches its own agent's data, e.g. the harness's search_knowledge); undefined otherwise.
   */
  workloadOwnAgent?: (principal: Extract<Principal, { kind: 'workload' }>, name: string) => OwnedAgentRef | undefined;
  /** Set by the MCP area: which servers an agent revision records, and the MCP_SERVERS value they render to. */
  mcpServers?: McpServersHook;
  /** Dependencies reported by the daemon's `GET /healthz`, by name (messaging's, spec 3 §4.3). */
  healthDependencies: Array<() => Record<string, HealthDependency>>;
  /** Push targets: maps a workload url of the project to where it listens (undefined: not a workload). */
  pushTargets?: Array<(projectId: string, url: URL) => string | undefined>;
  /** Set by the agents area: lets the secrets area bind project secrets to agents (spec 2 §4.1). */
  agentSecrets?: AgentSecretsHook;
  /** Set by the secrets area: an agent's bound values for a deploy (tracking bindings take the newest). */
  boundSecretEnv?: (projectId: string, agent: string) => Record<string, string>;
  /**
   * Set by the secrets area: the newest value of a project secret, undefined when there is none
   * (a serverless revision's env_from reads it when the revision is created, spec 2 §4.3).
   */
  projectSecretValue?: (projectId: string, name: string) => string | undefined;
  /**
   * What a trigger's target.service names (spec 2 §4.4), asked by the triggers area: the
   * serverless area answers for its services, the agents area for functions and agents.
   */
  triggerTargets?: {
    service?: (projectId: string, name: string) => boolean;
    workload?: (projectId: string, name: string) => 'function' | 'agent' | undefined;
    /**
     * A serving instance of the function or agent (cold-started when none runs), for a delivery
     * from inside the daemon: its loopback port and the headers it must carry. Throws ApiError
     * (404 gone, 503 cannot start). Saves the delivery a second HTTP hop through the daemon.
     * `release` takes the status the delivery got (502 when none came), which the agent's metrics count.
     */
    lease?: (projectId: string, name: string) => Promise<{ port: number; headers: Record<string, string>; release(status: number): void }>;
  };
  /** Set by the messaging area: pubsub triggers consume a subscription through the broker. */
  messagingConsumers?: MessagingConsumersHook;
  /**
   * Gauges each area reports when `/metrics` is scraped (workloads, backlog, points, cache memory,
   * sandbox pool): read then, never kept up to date (docs/decisions/operations.md).
   */
  metricsReaders: MetricsReader[];
  /** Told of every finished HTTP request: its route template (or a fixed name), status and duration. */
  requestObservers: Array<(method: string, route: string, status: number, seconds: number) => void>;
  /** Told of every workload instance that became ready, with the time from its launch (cold starts). */
  coldStartObservers: Array<(kind: WorkloadKind, seconds: number) => void>;
  /**
   * Files an area adds to `platform server backup` beyond the store and the durable trees (a cache
   * asks its servers for a snapshot first), asked when a backup begins.
   */
  backupPreparers: Array<{ area: string; files(): Promise<BackupFile[]> }>;
}

/** One file of a backup archive: `path` relative to the state directory, copied `from` a file or given as `data`. */
export interface BackupFile {
  path: string;
  from?: string;
  data?: string | Buffer;
}

/** How a delivery of a broker-driven consumer ended: ok acknowledges, permanent skips the retries. */
export interface ConsumerOutcome {
  ok: boolean;
  permanent?: boolean;
  status?: number;
  error?: string;
}

/** One message handed to an attached consumer, with the CloudEvent the push path would send. */
export interface ConsumedMessage {
  id: string;
  attempt: number;
  publishTime: number;
  /** The subscription's ack deadline: an attempt must end within it (its lease outlives it by 5 s). */
  deadlineMs: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The messaging broker's subscriptions consumed by another area (pubsub triggers): the broker
 * leases, acknowledges on ok, backs off and redelivers otherwise, and dead-letters as the
 * subscription says; the consumer only sends.
 */
export interface MessagingConsumersHook {
  /** The subscription to consume: the named one (must be a pull subscription) or a new one the caller owns. Throws ApiError. */
  prepare(projectId: string, topic: string, subscription: string | undefined, ownName: string, maxDeliver: number): { subscription: string; created: boolean };
  /** Starts delivering the subscription's messages to `send`; returns the detach function. */
  attach(
    projectId: string,
    topic: string,
    subscription: string,
    send: (m: ConsumedMessage, signal: AbortSignal) => Promise<ConsumerOutcome>,
    backoffMs: (failedAttempts: number) => number,
    /** How each delivery ended: acknowledged, or as the broker's failure path decided. */
    settled: (messageId: string, result: 'acknowledged' | 'retry' | 'dead-lettered' | 'dropped', error: string) => void,
  ): () => void;
  /** Sets how many deliveries a subscription the caller created gets before it dead-letters. */
  setMaxDeliver(projectId: string, topic: string, subscription: string, maxDeliver: number): void;
  /** Deletes a subscription the caller created (its trigger is gone). */
  remove(projectId: string, topic: string, subscription: string): void;
}

/** One invoke's session work: `context` joins the upstream body; one finish runs before the response ends. */
export interface InvokeTurn {
  context: { history?: Array<{ message: string; output: string }>; memories?: string[] };
  tap(chunk: Buffer): void;
  finishAgent(status: number, stream: boolean): Promise<void>;
  finishFunction(status: number, out: unknown): Promise<void>;
}
export interface AgentSessionsHook {
  /**
   * Throws the invoke's refusal (anonymous memorize 401, memory off 409, someone else's session 409).
   * newSession: the daemon generated the session id for this invoke, so it holds no turn yet.
   */
  begin(agent: { id: string; name: string; kind: 'agent' | 'function' }, body: { message?: string; session_id: string; user_id: string; memorize?: boolean }, authenticated: boolean, newSession?: boolean): InvokeTurn;
  /** One user's sessions of an agent, newest first (the widget's end-user list). */
  userSessions(agentId: string, userId: string, limit: number, offset: number): Array<{ id: string; turn_count: number; created_at: string; updated_at: string }>;
  /** A session with its turns when it belongs to that user; undefined when missing or someone else's. */
  userSession(agentId: string, id: string, userId: string): { session: { id: string; turn_count: number; created_at: string; updated_at: string }; turns: Array<{ index: number; message: string; output: string; finished_at: string }> } | undefined;
  /** The memory policy's variables for an instance of the agent (MEMORY_*, KNOWLEDGE_ENABLED). */
  workloadEnv(agentId: string): Record<string, string>;
}

/**
 * Names the caller of an anonymous invoke from its raw body (the widget: end_user), replacing any
 * user_id; throws the 400 when the body does not name one.
 */
export type EndUserOf = (body: Record<string, unknown>) => string;

/** One finished invoke: who, how it ended and how long it took (ids absent when the body was refused). */
export interface InvokeRecord {
  projectId: string;
  agentId: string;
  status: number;
  ms: number;
  userId?: string;
  sessionId?: string;
}

/** Projects a search runs over (the caller holds a contents role on each) and who asks. */
export interface SearchScope {
  projects: Array<{ id: string; admin: boolean }>;
  email: string;
}

export interface SearchableName {
  kind: SearchKind;
  name: string;
  projectId: string;
}

/** An agent the caller may manage, as areas other than agents see it. */
export interface OwnedAgentRef {
  projectId: string;
  agentId: string;
  name: string;
}

/** MCP_SERVERS for agents (spec 2 §4.2): recorded when a revision is built, rendered when an instance starts. */
export interface McpServersHook {
  /** Ids of the project's servers that are ready now (a revision keeps this list). */
  ready(projectId: string): string[];
  /** The MCP_SERVERS entries of those servers that still exist, with current urls and bearers. */
  render(projectId: string, serverIds: string[]): Array<{ name: string; url: string; bearer: string }>;
}

/** What the secrets area needs from the agents area to bind, unbind and apply. */
export interface AgentSecretsHook {
  /** The agent's id when an agent of that name exists in the project. */
  find(projectId: string, agent: string): { id: string } | undefined;
  /**
   * Sets and removes keys of the agent's stored secret environment and rolls a revision. Called
   * inside the secrets area's transaction (so all or nothing); returns whether a revision was
   * rolled and optional work to run after the commit (for example recycling running instances).
   */
  applySecretEnv(
    projectId: string,
    agentId: string,
    change: { set: Record<string, string>; remove: string[] },
  ): { revisionRolled: boolean; afterCommit?: () => Promise<void> };
}

export const emptyHooks = (): Hooks => ({
  projectDependents: [],
  agentNames: [],
  unownedAgents: [],
  nameInUse: [],
  quotaUsage: [],
  hostRoutes: [],
  pathRoutes: [],
  healthDependencies: [],
  searchables: [],
  invokeObservers: [],
  metricsReaders: [],
  requestObservers: [],
  coldStartObservers: [],
  backupPreparers: [],
});

/**
 * One area of the daemon (spec sections map to areas). The registry applies migrations, lets each
 * area register routes, then starts areas in order and stops them in reverse.
 */
export interface Area {
  name: string;
  migrations?: readonly string[];
  register(router: Router, ctx: AreaContext): void;
  /** Start-up work such as reconciling workloads from the database. */
  start?(ctx: AreaContext): Promise<void>;
  stop?(): Promise<void>;
}
