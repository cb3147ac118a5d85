import { z } from 'zod';
import { MiB, route } from './contract.js';
import { PageQuery, Timestamp, Uuid } from './common.js';
import { TrafficTarget } from './traffic.js';
import { lazySchema } from './lazy.js';

/** Agent and function names (spec 1 §4.12): a lowercase DNS label of at most 63 characters. */
export const AGENT_NAME_RE = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;
export const SESSION_ID_RE = /^[A-Za-z0-9_.-]{1,128}$/;
export const USER_ID_RE = /^[A-Za-z0-9_.:@-]{1,128}$/;
export const ENV_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const FRAMEWORKS = ['adk', 'langgraph', 'crewai', 'function', 'container'] as const;
export const RUNTIMES = ['python', 'nodejs', 'go', 'ruby'] as const;
export type Framework = (typeof FRAMEWORKS)[number];
export type Runtime = (typeof RUNTIMES)[number];
export const AGENT_STATES = ['building', 'deploying', 'ready', 'failed'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** Limits of spec 1 §8.1. */
export const LIMITS = {
  uploadBytes: 100 * MiB + 1 * MiB,
  fileBytes: 1 * MiB,
  files: 200,
  expandedBytes: 64 * MiB,
  invokeBytes: 1 * MiB,
  upstreamBytes: 32 * MiB,
  secretsBytes: 1 * MiB,
  timeoutDefaultSeconds: 60,
  timeoutMaxSeconds: 900,
  buildMessageChars: 4000,
} as const;

export const AgentName = lazySchema(() => z.string().regex(AGENT_NAME_RE, 'must be a lowercase DNS label (^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$)'));

/**
 * The config document (spec 1 §4.12 "same shape as the config PATCH"; its fields are not shown).
 * We accept the knobs of §8.4 and §8.5, the peer's (Cloud Run) names for them.
 */
export const AgentConfig = lazySchema(() => z.strictObject({
  timeout_seconds: z.number().int().min(1).optional(),
  response_start_seconds: z.number().int().min(1).optional(),
  instance_size: z.enum(['small', 'medium', 'large', 'xlarge']).optional(),
  description: z.string().max(1000).optional(),
}));
export type AgentConfig = z.infer<typeof AgentConfig>;

/**
 * One target of an agent's traffic split (docs/decisions/agents-traffic.md): the services' shape
 * (spec 2 §4.3) without tags, since an agent has one address. A named revision is pinned; a
 * latest_revision target follows every new revision that serves.
 */
export const AgentTrafficTarget = lazySchema(() => TrafficTarget.omit({ tag: true }));
export type AgentTrafficTarget = z.infer<typeof AgentTrafficTarget>;
/** What is served: each revision taking requests with its merged share. */
export const ServedTraffic = lazySchema(() => z.object({ revision_name: z.string(), percent: z.number().int() }));
export type ServedTraffic = z.infer<typeof ServedTraffic>;

/** Agent or function view of spec 1 §2.2. */
export const AgentView = lazySchema(() => z.object({
  name: z.string(),
  state: z.enum(AGENT_STATES),
  ready: z.boolean(),
  kind: z.enum(['agent', 'function']),
  framework: z.string(),
  runtime: z.string().optional(),
  image: z.string().optional(),
  url: z.string().optional(),
  external_url: z.string().optional(),
  public_url: z.string(),
  latest_revision: z.string().optional(),
  /**
   * The newest revision that serves (where a latest_revision target goes); differs from
   * latest_revision while a newer one deploys or after it failed. A pinned split sends requests elsewhere: see active_traffic.
   */
  serving_revision: z.string().optional(),
  traffic: z.array(AgentTrafficTarget).describe('the split as set (default: latest_revision 100)'),
  active_traffic: z.array(ServedTraffic).describe('what is served: revisions with their share; empty before a revision serves'),
  message: z.string().optional(),
  owner: z.string(),
  project_id: Uuid,
  created_at: Timestamp,
  updated_at: Timestamp,
}));
export type AgentView = z.infer<typeof AgentView>;

/** A revision's own state: deploying until it first serves, failed when its build or start failed. */
export const REVISION_STATES = ['deploying', 'ready', 'failed'] as const;

export const RevisionView = lazySchema(() => z.object({
  name: z.string(),
  agent: z.string(),
  state: z.enum(REVISION_STATES),
  /** True for a revision that takes requests now (a share of the split above 0). */
  serving: z.boolean(),
  traffic_percent: z.number().int(),
  /** Why it failed (the build output's last lines, or the start error). */
  message: z.string().optional(),
  reason: z.enum(['deploy', 'redeploy', 'config', 'secrets', 'env']),
  build_id: Uuid,
  image: z.string().optional(),
  env_keys: z.array(z.string()),
  secret_keys: z.array(z.string()),
  config: AgentConfig,
  created_at: Timestamp,
}));
export type RevisionView = z.infer<typeof RevisionView>;

export const LogLine = lazySchema(() => z.object({
  ts: Timestamp,
  revision: z.string(),
  instance: z.string(),
  stream: z.enum(['stdout', 'stderr', 'system']),
  message: z.string(),
}));
export type LogLine = z.infer<typeof LogLine>;

export const FileInfo = lazySchema(() => z.object({ path: z.string(), size: z.number().int(), updated_at: Timestamp }));

const NameParams = lazySchema(() => z.object({ name: AgentName }));
const FileParams = lazySchema(() => z.object({ name: AgentName, path: z.string() }));
const ProjectQuery = lazySchema(() => z.object({ project: z.string().optional() }));
const KeyMap = lazySchema(() => z.record(z.string(), z.string()));
const SetRemove = lazySchema(() => z.strictObject({ set: KeyMap.optional(), remove: z.array(z.string()).optional() }));

export const agentRoutes = {
  deploy: route({
    id: 'agents.deploy',
    method: 'POST',
    path: '/v1/agents',
    summary: 'Deploy an agent or function (multipart: name, framework, runtime, code, config)',
    auth: 'any',
    query: ProjectQuery,
    status: 202,
    response: lazySchema(() => z.object({ agent: AgentView, build_id: Uuid })),
  }),
  list: route({
    id: 'agents.list',
    method: 'GET',
    path: '/v1/agents',
    summary: 'List agents: plain members see their own, admins see all',
    auth: 'any',
    query: lazySchema(() => PageQuery.extend({ project: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({ agents: z.array(AgentView), next_page_token: z.string() })),
  }),
  get: route({
    id: 'agents.get',
    method: 'GET',
    path: '/v1/agents/{name}',
    summary: 'One agent',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: AgentView,
  }),
  delete: route({
    id: 'agents.delete',
    method: 'DELETE',
    path: '/v1/agents/{name}',
    summary: 'Delete an agent and stop every instance',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: AgentView, deleted: z.literal(true) })),
  }),
  redeploy: route({
    id: 'agents.redeploy',
    method: 'POST',
    path: '/v1/agents/{name}/redeploy',
    summary: 'Rebuild from the stored source',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({})),
    status: 202,
    response: lazySchema(() => z.object({ agent: AgentView, build_id: Uuid, files: z.number().int(), note: z.string() })),
  }),
  revisions: route({
    id: 'agents.revisions',
    method: 'GET',
    path: '/v1/agents/{name}/revisions',
    summary: 'Immutable revisions, newest first',
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => PageQuery.extend({ project: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), revisions: z.array(RevisionView), next_page_token: z.string() })),
  }),
  pin: route({
    id: 'agents.revisions.pin',
    method: 'POST',
    path: '/v1/agents/{name}/revisions',
    summary: 'Send 100% of requests to one revision (revision_name), or back to the latest (latest_revision true)',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({ revision_name: z.string().optional(), latest_revision: z.boolean().optional() })),
    status: 200,
    response: AgentView,
  }),
  trafficGet: route({
    id: 'agents.traffic.get',
    method: 'GET',
    path: '/v1/agents/{name}/set-traffic',
    summary: 'The split as set (the body set-traffic takes) and what is served',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), traffic: z.array(AgentTrafficTarget), active_traffic: z.array(ServedTraffic) })),
  }),
  setTraffic: route({
    id: 'agents.traffic.set',
    method: 'POST',
    path: '/v1/agents/{name}/set-traffic',
    summary: 'Replace the whole traffic split between revisions (percentages sum to 100)',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({ traffic: z.array(AgentTrafficTarget).optional().describe('required: the complete split') })),
    status: 200,
    response: AgentView,
  }),
  logs: route({
    id: 'agents.logs',
    method: 'GET',
    path: '/v1/agents/{name}/logs',
    summary: 'Live logs of the newest running instance (text/plain; ?follow=true tails)',
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => z.object({ project: z.string().optional(), follow: z.enum(['true', 'false', '1', '0']).optional() })),
    status: 200,
    response: lazySchema(() => z.string()),
  }),
  logHistory: route({
    id: 'agents.logs.history',
    method: 'GET',
    path: '/v1/agents/{name}/logs/history',
    summary: 'Persisted log lines, oldest first',
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => z.object({ project: z.string().optional(), limit: z.string().optional(), since: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), lines: z.array(LogLine), count: z.number().int(), note: z.string() })),
  }),
  buildLog: route({
    id: 'agents.logs.build',
    method: 'GET',
    path: '/v1/agents/{name}/logs/build',
    summary: 'Build output (text/plain) of the newest build, of ?revision= (name or number) or of ?build= (id); ?follow=true streams a running build until it ends',
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => z.object({
      project: z.string().optional(),
      revision: z.string().optional(),
      build: Uuid.optional(),
      follow: z.enum(['true', 'false', '1', '0']).optional(),
    })),
    status: 200,
    response: lazySchema(() => z.string()),
  }),
  secretsGet: route({
    id: 'agents.secrets.get',
    method: 'GET',
    path: '/v1/agents/{name}/secrets',
    summary: 'Secret key names (values are never returned)',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), keys: z.array(z.string()) })),
  }),
  secretsPut: route({
    id: 'agents.secrets.put',
    method: 'PUT',
    path: '/v1/agents/{name}/secrets',
    summary: 'Replace every secret',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: KeyMap,
    bodyLimit: LIMITS.secretsBytes,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), secrets_updated: z.number().int() })),
  }),
  secretsPatch: route({
    id: 'agents.secrets.patch',
    method: 'PATCH',
    path: '/v1/agents/{name}/secrets',
    summary: 'Set and remove secrets',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: SetRemove,
    bodyLimit: LIMITS.secretsBytes,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), secrets_updated: z.number().int(), keys: z.array(z.string()) })),
  }),
  envGet: route({
    id: 'agents.env.get',
    method: 'GET',
    path: '/v1/agents/{name}/env',
    summary: 'Environment variables',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), env: KeyMap })),
  }),
  envPatch: route({
    id: 'agents.env.patch',
    method: 'PATCH',
    path: '/v1/agents/{name}/env',
    summary: 'Set and remove environment variables',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: SetRemove,
    bodyLimit: LIMITS.secretsBytes,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), env_updated: z.number().int(), env: KeyMap })),
  }),
  configGet: route({
    id: 'agents.config.get',
    method: 'GET',
    path: '/v1/agents/{name}/config',
    summary: 'Compute config of the newest revision (timeout, size)',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), config: AgentConfig })),
  }),
  configPatch: route({
    id: 'agents.config.patch',
    method: 'PATCH',
    path: '/v1/agents/{name}/config',
    summary: 'Change the compute config; rolls a revision',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: AgentConfig,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), config: AgentConfig, config_updated: z.number().int(), latest_revision: z.string().optional() })),
  }),
  filesList: route({
    id: 'agents.files.list',
    method: 'GET',
    path: '/v1/agents/{name}/files',
    summary: 'Stored source files',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), agent_id: Uuid, files: z.array(FileInfo), editable: z.boolean(), note: z.string() })),
  }),
  fileGet: route({
    id: 'agents.files.get',
    method: 'GET',
    path: '/v1/agents/{name}/files/{path...}',
    summary: 'One stored source file',
    auth: 'any',
    params: FileParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ path: z.string(), content: z.string(), updated_at: Timestamp })),
  }),
  filePut: route({
    id: 'agents.files.put',
    method: 'PUT',
    path: '/v1/agents/{name}/files/{path...}',
    summary: 'Write one source file (takes effect on the next redeploy)',
    auth: 'any',
    params: FileParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({ content: z.string() })),
    // A 1 MiB file may grow under JSON escaping; the file cap itself is checked on the content.
    bodyLimit: 2 * LIMITS.fileBytes + 1024,
    status: 200,
    response: FileInfo,
  }),
  fileDelete: route({
    id: 'agents.files.delete',
    method: 'DELETE',
    path: '/v1/agents/{name}/files/{path...}',
    summary: 'Remove one source file',
    auth: 'any',
    params: FileParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ path: z.string(), deleted: z.literal(true) })),
  }),
  invoke: route({
    id: 'agents.invoke',
    method: 'POST',
    path: '/v1/agents/{name}/invoke',
    summary: 'Talk to the agent (open unless INVOKE_AUTH_REQUIRED)',
    auth: 'none',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.record(z.string(), z.unknown())),
  }),
  invokeStream: route({
    id: 'agents.invoke.stream',
    method: 'POST',
    path: '/v1/agents/{name}/invoke/stream',
    summary: 'Streaming invoke (NDJSON)',
    auth: 'none',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.string()),
  }),
};

/** The request fields of invoke that survive (spec 1 §4.12); every other key is dropped. */
export const InvokeBody = lazySchema(() => z.object({
  message: z.string().optional(),
  session_id: z.string().regex(SESSION_ID_RE, 'must match ^[A-Za-z0-9_.-]{1,128}$').optional(),
  user_id: z.string().regex(USER_ID_RE, 'must match ^[A-Za-z0-9_.:@-]{1,128}$').optional(),
  memorize: z.boolean().optional(),
}));
export type InvokeBody = z.infer<typeof InvokeBody>;
