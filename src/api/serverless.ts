import { z } from 'zod';
import { KiB, MiB, route, withProjectIdRule, withRateLimit } from './contract.js';
import { Note, PageQuery, Timestamp } from './common.js';
import { ProjectParams } from './projects.js';
import { TrafficTarget } from './traffic.js';
import { lazySchema } from './lazy.js';
// Plain functions and tables of the contract, in a module without zod (the CLI's start loads no zod for them).
export { secretEnvName, SERVER_ENTRIES } from './serverless-sources.js';

/**
 * Serverless services: scale-to-zero container services with immutable revisions and traffic
 * splits (spec 2 §2.3, §3, §4.3, §8, §9). Request bodies are strict: an unknown field is a 400
 * naming it (spec 1 §7). Rules whose wording the spec fixes (invalid name, image required, the
 * traffic and scaling validations) are checked by the daemon so every error reads the same.
 */

/** Spec 2 §4.3: 1 to 52 characters (the revision suffix -00001 makes 58, under a DNS label's 63). */
export const SERVICE_NAME_RE = /^[a-z]([-a-z0-9]{0,50}[a-z0-9])?$/;
export const SERVICE_NAME_MAX = 52;
/** `GET .../services/healthz` is the area's health check, so no service may take that name. */
export const RESERVED_SERVICE_NAMES = ['healthz'] as const;
/** Spec 2 §8: serverless bodies are capped at 256 KiB. */
export const SERVERLESS_BODY_LIMIT = 256 * KiB;
/** A source folder upload for `platform services deploy DIR` (like an agent's code upload, spec 1 §8.1). */
export const SERVERLESS_SOURCE_LIMIT = 100 * MiB + 1 * MiB;
/** Spec 2 §8: 100 requests per second, burst 200, per principal (health exempt). */
export const SERVERLESS_RATE_LIMIT = { group: 'serverless', burst: 200, refillPerSecond: 100 };
/** Spec 2 §8: log tail 1 to 10000, default 500 (setting LOG_TAIL_LINES). */
export const LOG_TAIL_DEFAULT = 500;
export const LOG_TAIL_MAX = 10_000;
/** Spec 2 §4.3 and §8: timeout_seconds 1 to 3600, default 300, mirrored into this variable. */
export const TIMEOUT_DEFAULT = 300;
export const TIMEOUT_MAX = 3600;
export const TIMEOUT_ENV = 'PLATFORM_REQUEST_TIMEOUT_SECONDS';
/** Spec 2 §4.3 create defaults. */
export const PORT_DEFAULT = 8080;
export const SCALING_DEFAULTS = { min_scale: 0, max_scale: 10, container_concurrency: 80 } as const;
export const RESOURCES_DEFAULT = { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '512Mi' } } as const;
/** Source folders uploaded for `services deploy DIR` become images of this form (content-addressed). */
export const SOURCE_IMAGE_PREFIX = 'source.platform.local/';
export const SOURCE_IMAGE_RE = /^source\.platform\.local\/([a-z0-9]+)\/sha256-([0-9a-f]{64})$/;
/** Spec 2 §4.3: env values of keys matching these (case-insensitive) are redacted in the spec YAML. */
export const SECRET_LOOKING_KEY_RE = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE/i;
export const REDACTED = '***REDACTED***';
/** The header a PATCH names the generation it was computed from (409 when the service moved on). */
export const IF_MATCH_HEADER = 'If-Match';

export const SERVICE_STATES = ['pending', 'ready', 'not_ready', 'degraded', 'invalid'] as const;
export const ServiceState = lazySchema(() => z.enum(SERVICE_STATES));
export type ServiceState = z.infer<typeof ServiceState>;
export const REVISION_STATES = ['ready', 'not_ready', 'unknown'] as const;
export const RevisionState = lazySchema(() => z.enum(REVISION_STATES));
export type RevisionState = z.infer<typeof RevisionState>;
export const CONDITION_TYPES = ['Ready', 'ServiceReady', 'TrafficAccepted', 'Exposed', 'RuntimeClassApplied', 'VisibilityEnforced'] as const;
export const ConditionType = lazySchema(() => z.enum(CONDITION_TYPES));
export type ConditionType = z.infer<typeof ConditionType>;

const Int = lazySchema(() => z.number().int('must be an integer'));

// ---- write fields (create and patch) ----

export const EnvFrom = lazySchema(() => z.strictObject({
  secret_name: z.string().optional().describe('a project secret (spec 2 §4.1), read when the revision is created'),
  config_map_name: z.string().optional().describe('config maps do not exist on this platform: only with optional true'),
  optional: z.boolean().optional().describe('a missing secret or config map is skipped instead of refused'),
  env_name: z
    .string()
    .optional()
    .describe('extension: the variable the secret lands in; default the secret name upper-cased with - as _ (docs/decisions/serverless.md)'),
}));
export type EnvFrom = z.infer<typeof EnvFrom>;

export const PortSpec = lazySchema(() => z.strictObject({
  name: z.enum(['http1', 'h2c']).optional().describe('default http1'),
  container_port: Int.min(1, 'container_port must be 1 to 65535').max(65535, 'container_port must be 1 to 65535').optional().describe('default 8080'),
}));
export type PortSpec = z.infer<typeof PortSpec>;

/** Kubernetes quantities: cpu as cores or millicores ("250m", "1", "0.5"), memory as bytes ("512Mi"). */
export const ResourceAmounts = lazySchema(() => z.strictObject({ cpu: z.string().optional(), memory: z.string().optional() }));
export const Resources = lazySchema(() => z.strictObject({ requests: ResourceAmounts.optional(), limits: ResourceAmounts.optional() }));
export type Resources = z.infer<typeof Resources>;

/** Numbers are checked by the daemon (negative values, min above max) so errors read as spec 2 §4.3. */
export const ScalingInput = lazySchema(() => z.strictObject({
  min_scale: Int.optional(),
  max_scale: Int.optional().describe('0 behaves as 10'),
  container_concurrency: Int.optional().describe('0 means the serverless default (80)'),
}));
export type ScalingInput = z.infer<typeof ScalingInput>;

export const Publish = lazySchema(() => z.strictObject({
  enabled: z.boolean().optional(),
  host: z.string().optional().describe('stored but ignored'),
}));

// One target of a split: shared with agents' traffic (src/api/traffic.ts).
export { TrafficTarget };

// A function, not an object of schemas: the schemas are built with the bodies that spread them (lazy.ts).
const fields = () => ({
  image: z.string().optional().describe('required on create: a docker reference, or source.platform.local/<short>/sha256-<hex> from POST .../services/sources'),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  env_from: z.array(EnvFrom).optional(),
  ports: z.array(PortSpec).optional().describe('at most one'),
  resources: Resources.optional(),
  scaling: ScalingInput.optional(),
  publish: Publish.optional(),
  traffic: z.array(TrafficTarget).optional(),
  runtime_class_name: z.string().optional(),
  service_account_name: z.string().optional(),
  timeout_seconds: Int.optional().describe('1 to 3600, default 300'),
});

export const ServiceCreateBody = lazySchema(() => z.strictObject({
  name: z.string().optional().describe('required: ^[a-z]([-a-z0-9]{0,50}[a-z0-9])?$, 1 to 52 characters; healthz is reserved'),
  ...fields(),
}));
export type ServiceCreateBody = z.infer<typeof ServiceCreateBody>;

/** Sparse: omitted fields are untouched, explicit zero sets zero, scaling merges onto current values. */
export const ServicePatchBody = lazySchema(() => z.strictObject({
  name: z.string().optional().describe('accepted only when equal to the current name (cannot be renamed)'),
  ...fields(),
}));
export type ServicePatchBody = z.infer<typeof ServicePatchBody>;

export const SetTrafficBody = lazySchema(() => z.strictObject({
  traffic: z.array(TrafficTarget).optional().describe('required: the complete split'),
}));
export type SetTrafficBody = z.infer<typeof SetTrafficBody>;

// ---- read shapes ----

export const Condition = lazySchema(() => z.object({
  type: ConditionType,
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  last_transition_time: Timestamp,
}));
export type Condition = z.infer<typeof Condition>;

export const ActiveTraffic = lazySchema(() => z.object({
  revision_name: z.string(),
  percent: z.number().int(),
  tag: z.string().optional(),
  url: z.string().optional().describe("the tag's own address; present on tagged targets"),
}));
export type ActiveTraffic = z.infer<typeof ActiveTraffic>;

export const Scaling = lazySchema(() => z.object({ min_scale: z.number().int(), max_scale: z.number().int(), container_concurrency: z.number().int() }));

export const ServiceView = lazySchema(() => z.object({
  name: z.string(),
  project: z.string().describe('projects/<short>/services/<name>'),
  image: z.string(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()),
  env_from: z.array(EnvFrom),
  ports: z.array(z.object({ name: z.string(), container_port: z.number().int() })),
  resources: Resources,
  scaling: Scaling,
  publish: z.object({ enabled: z.boolean(), host: z.string().optional() }),
  traffic: z.array(TrafficTarget).describe('the split as requested'),
  runtime_class_name: z.string(),
  service_account_name: z.string(),
  timeout_seconds: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
  state: ServiceState.describe('pending means nothing reported yet'),
  ready: z.boolean(),
  message: z.string().optional().describe('omitted once ready'),
  url: z.string().describe('the public address the router serves (http://<name>-<short>.apps.localhost:<port>)'),
  external_url: z.string().optional().describe('public HTTPS address: only once reachable over valid TLS (never on a laptop)'),
  internal_url: z.string().describe('always present; callable only from platform workloads'),
  published: z.boolean(),
  latest_ready_revision: z.string().optional(),
  latest_created_revision: z.string(),
  active_traffic: z.array(ActiveTraffic).describe('what is served'),
  conditions: z.array(Condition),
  generation: z.number().int(),
  observed_generation: z.number().int().describe('unequal to generation: accepted but not yet applied'),
}));
export type ServiceView = z.infer<typeof ServiceView>;

export const RevisionView = lazySchema(() => z.object({
  name: z.string().describe('<service>-00001, -00002, ...'),
  generation: z.number().int().describe('the service generation that created it'),
  image: z.string().describe('resolved digest when known'),
  state: RevisionState,
  ready: z.boolean(),
  reason: z.string().optional(),
  message: z.string().optional(),
  replicas: z.number().int(),
  created_at: Timestamp,
  traffic_percent: z.number().int(),
  tag: z.string().optional(),
  url: z.string().optional(),
}));
export type RevisionView = z.infer<typeof RevisionView>;

export const MetricsView = lazySchema(() => z.object({
  service: z.string(),
  instances: z.object({ current: z.number().int(), desired: z.number().int() }),
  revisions: z.array(
    z.object({
      name: z.string(),
      generation: z.number().int(),
      replicas: z.number().int(),
      state: RevisionState,
      ready: z.boolean(),
      traffic_percent: z.number().int(),
      latest_ready: z.boolean(),
      latest_created: z.boolean(),
    }),
  ),
  state: ServiceState,
  ready: z.boolean(),
  readiness: z.object({
    state: ServiceState,
    ready: z.boolean(),
    reason: z.string().optional(),
    message: z.string().optional(),
    last_transition_time: Timestamp,
  }),
  scaling: Scaling,
  note: Note,
}));
export type MetricsView = z.infer<typeof MetricsView>;

export const HealthView = lazySchema(() => z.object({
  status: z.enum(['ok', 'degraded']),
  service: z.literal('serverless-api'),
  database: z.enum(['ok', 'disabled', 'unreachable']),
  database_detail: z.string().optional(),
  sessions: z.enum(['ok', 'unavailable']),
  sessions_detail: z.string().optional(),
  orchestration: z.enum(['ok', 'unreachable']),
  orchestration_detail: z.string().optional(),
  crd: z.enum(['ok', 'missing']),
  crd_detail: z.string().optional(),
}));
export type HealthView = z.infer<typeof HealthView>;

export const ServiceParams = lazySchema(() => ProjectParams.extend({ name: z.string() }));
export const VerbParams = lazySchema(() => ServiceParams.extend({ verb: z.string() }));
export const LogsQuery = lazySchema(() => z.strictObject({
  tail: z.string().optional().describe('1 to 10000, default 500'),
  follow: z.string().optional().describe('true streams new lines'),
}));

const base = '/v1/projects/{projectID}/services';

export const serverlessRoutes = {
  ...withRateLimit(SERVERLESS_RATE_LIMIT, withProjectIdRule('uuid-404', {
    list: route({
      id: 'services.list',
      method: 'GET',
      path: base,
      summary: "List a project's serverless services",
      auth: 'any',
      params: ProjectParams,
      query: PageQuery,
      status: 200,
      response: lazySchema(() => z.object({ services: z.array(ServiceView), next_page_token: z.string().optional() })),
    }),
    create: route({
      id: 'services.create',
      method: 'POST',
      path: base,
      summary: 'Create a service: its first revision starts; poll until ready',
      auth: 'any',
      params: ProjectParams,
      body: ServiceCreateBody,
      bodyLimit: SERVERLESS_BODY_LIMIT,
      status: 202,
      response: ServiceView,
    }),
    get: route({
      id: 'services.get',
      method: 'GET',
      path: `${base}/{name}`,
      summary: 'One service',
      auth: 'any',
      params: ServiceParams,
      status: 200,
      response: ServiceView,
    }),
    patch: route({
      id: 'services.patch',
      method: 'PATCH',
      path: `${base}/{name}`,
      summary: 'Sparse update (If-Match: <generation> makes a stale update a 409); a template change creates a revision',
      auth: 'any',
      params: ServiceParams,
      body: ServicePatchBody,
      bodyLimit: SERVERLESS_BODY_LIMIT,
      status: 200,
      response: ServiceView,
    }),
    delete: route({
      id: 'services.delete',
      method: 'DELETE',
      path: `${base}/{name}`,
      summary: 'Delete a service, its revisions and instances; releases its address (project admin)',
      auth: 'any',
      params: ServiceParams,
      status: 204,
      response: lazySchema(() => z.undefined()),
    }),
    revisions: route({
      id: 'services.revisions',
      method: 'GET',
      path: `${base}/{name}/revisions`,
      summary: "A service's revisions, newest first (never paged)",
      auth: 'any',
      params: ServiceParams,
      status: 200,
      response: lazySchema(() => z.object({ revisions: z.array(RevisionView) })),
    }),
    setTraffic: route({
      id: 'services.setTraffic',
      method: 'POST',
      path: `${base}/{name}:set-traffic`,
      summary: 'Replace the whole traffic split',
      auth: 'any',
      params: ServiceParams,
      body: SetTrafficBody,
      bodyLimit: SERVERLESS_BODY_LIMIT,
      status: 202,
      response: ServiceView,
    }),
    /** Any other custom verb: 404 naming the one supported (spec 2 §4.3). */
    unknownVerb: route({
      id: 'services.unknownVerb',
      method: 'POST',
      path: `${base}/{name}:{verb}`,
      summary: 'Unknown custom verbs answer 404 (only :set-traffic is supported)',
      auth: 'any',
      params: VerbParams,
      status: 404,
      response: lazySchema(() => z.object({ error: z.string(), request_id: z.string().optional() })),
    }),
    logs: route({
      id: 'services.logs',
      method: 'GET',
      path: `${base}/{name}/logs`,
      summary: 'text/plain log lines of the newest running instance (?tail, ?follow=true)',
      auth: 'any',
      params: ServiceParams,
      query: LogsQuery,
      status: 200,
      response: lazySchema(() => z.string()),
    }),
    spec: route({
      id: 'services.spec',
      method: 'GET',
      path: `${base}/{name}/spec`,
      summary: 'The service as a Knative serving.knative.dev/v1 Service manifest (secret-looking env values redacted)',
      auth: 'any',
      params: ServiceParams,
      status: 200,
      response: lazySchema(() => z.object({ service: z.string(), yaml: z.string(), note: Note })),
    }),
    metrics: route({
      id: 'services.metrics',
      method: 'GET',
      path: `${base}/{name}/metrics`,
      summary: 'Live readout: instances and revisions (no history)',
      auth: 'any',
      params: ServiceParams,
      status: 200,
      response: MetricsView,
    }),
    sources: route({
      id: 'services.sources.upload',
      method: 'POST',
      path: `${base}/sources`,
      summary: 'Upload a source folder (.tar.gz body); answers the image reference create and patch accept',
      auth: 'any',
      params: ProjectParams,
      bodyLimit: SERVERLESS_SOURCE_LIMIT,
      status: 201,
      response: lazySchema(() => z.object({ image: z.string(), digest: z.string(), size_bytes: z.number().int() })),
    }),
  })),
  /** Always 200, no credential, not rate-limited; degradation is in the body. */
  health: route({
    id: 'services.health',
    method: 'GET',
    path: `${base}/healthz`,
    summary: 'Serverless API health: database, sessions, orchestration, crd',
    auth: 'none',
    unlimited: true,
    params: ProjectParams,
    status: 200,
    response: HealthView,
  }),
};

