import { z } from 'zod';
import { KiB, route } from './contract.js';
import { Note, PageQuery, Timestamp } from './common.js';
import { ProjectParams } from './projects.js';
import { lazySchema } from './lazy.js';

/** Project secret store and bindings (spec 2 §2.1, §4.1, §8). */

export const SECRET_NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,62}$/;
export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const SECRET_VALUE_MAX_BYTES = 65536;
export const SECRET_CREATE_BODY_LIMIT = 128 * KiB;
export const SECRET_MAP_BODY_LIMIT = 8 * KiB;
export const TOKEN_TTL_DEFAULT = 300;
export const TOKEN_TTL_MAX = 3600;
/** Reserved and invisible on every secrets route (spec 2 §4.1). */
export const RESERVED_SECRET_NAME = 'cloud-account-credential';

/** Environment names a binding may never target (spec 2 §4.1, the 19 reserved names). */
export const RESERVED_ENV_NAMES = [
  'MODEL_API_KEY', 'MODEL_BASE_URL', 'EMBED_BASE_URL', 'SANDBOX_URL', 'CACHE_ADDR', 'VECTOR_STORE_URL', 'AGENT_NAME',
  'AGENT_IMAGE', 'TOOL_SANDBOX', 'SECRETSTORE_ADDR', 'SECRETSTORE_TOKEN', 'BROKER_URL', 'BROKER_PASSWORD',
  'ORCHESTRATOR_SERVICE_HOST', 'ORCHESTRATOR_SERVICE_PORT', 'PATH', 'HOME', 'LD_PRELOAD', 'PYTHONPATH',
] as const;

export const SecretParams = lazySchema(() => ProjectParams.extend({ name: z.string() }));
export const AgentParams = lazySchema(() => ProjectParams.extend({ agent: z.string() }));
export const SecretMapParams = lazySchema(() => AgentParams.extend({ envName: z.string() }));

export const SecretVersion = lazySchema(() => z.object({ version: z.number().int(), created_at: Timestamp, destroyed: z.boolean() }));

export const SecretUse = lazySchema(() => z.object({
  id: z.string(),
  agent_id: z.string(),
  agent_slug: z.string(),
  env_name: z.string(),
  version: z.number().int().optional().describe('omitted when tracking newest'),
  created_at: Timestamp,
  updated_at: Timestamp,
}));

export const SecretListEntry = lazySchema(() => z.object({ name: z.string(), current_version: z.number().int(), created_at: Timestamp, updated_at: Timestamp }));

/** Secret metadata (spec 2 §2.1): never a value. */
export const SecretView = lazySchema(() => SecretListEntry.extend({
  versions: z.array(SecretVersion),
  used_by: z.array(SecretUse).optional().describe('absent when nothing binds the secret'),
}));
export type SecretView = z.infer<typeof SecretView>;

export const SecretCreateBody = lazySchema(() => z.strictObject({
  name: z.string().regex(SECRET_NAME_RE, 'must be 1 to 63 letters, digits, hyphens or underscores, starting with a letter or digit'),
  value: z
    .string()
    .min(1, 'must not be empty')
    .refine((v) => Buffer.byteLength(v, 'utf8') <= SECRET_VALUE_MAX_BYTES, `must be at most ${SECRET_VALUE_MAX_BYTES} bytes`),
}));

export const TokenBody = lazySchema(() => z.strictObject({
  ttl_seconds: z.number().int('must be an integer').min(1, 'must be at least 1').optional(),
}));

export const ReadLocation = lazySchema(() => z.object({
  addr: z.string().describe('Vault-compatible address: point VAULT_ADDR (or a Vault client endpoint) here'),
  path: z.string().describe('KV v2 read path below /v1/; a project token reads <path><name>'),
}));

export const TokenResponse = lazySchema(() => z.object({ token: z.string(), ttl_seconds: z.number().int(), read: ReadLocation, note: Note }));

export const RevealBody = lazySchema(() => z.object({ version: z.number().int().min(0).optional(), reason: z.string().optional() }));

export const Binding = lazySchema(() => z.object({
  id: z.string(),
  agent_id: z.string(),
  agent: z.string(),
  env_name: z.string(),
  secret_name: z.string(),
  version: z.number().int().optional(),
  pinned_to: z.string().describe('"latest" or an exact version number as a string'),
  created_at: Timestamp,
  updated_at: Timestamp,
}));
export type Binding = z.infer<typeof Binding>;

export const BindBody = lazySchema(() => z.strictObject({
  secret_name: z.string(),
  version: z.number().int().min(1, 'must be a version number (1 or more), or null to track the newest').nullable().optional(),
}));

export const ApplyRow = lazySchema(() => z.object({
  env_name: z.string(),
  secret_name: z.string(),
  version: z.number().int().optional(),
  applied: z.boolean(),
  error: z.string().optional(),
}));
export type ApplyRow = z.infer<typeof ApplyRow>;

export const secretRoutes = {
  list: route({
    id: 'secrets.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/secrets',
    summary: "List a project's secrets (metadata only)",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ secrets: z.array(SecretListEntry), path_prefix: z.string(), next_page_token: z.string().optional() })),
  }),
  write: route({
    id: 'secrets.write',
    method: 'POST',
    path: '/v1/projects/{projectID}/secrets',
    summary: 'Create a secret or store a new version of it (201 first version, 200 rotation)',
    auth: 'any',
    params: ProjectParams,
    body: SecretCreateBody,
    bodyLimit: SECRET_CREATE_BODY_LIMIT,
    status: 201,
    response: lazySchema(() => z.object({ name: z.string(), version: z.number().int(), created: z.boolean(), note: Note })),
  }),
  get: route({
    id: 'secrets.get',
    method: 'GET',
    path: '/v1/projects/{projectID}/secrets/{name}',
    summary: "One secret's metadata, versions and bindings",
    auth: 'any',
    params: SecretParams,
    status: 200,
    response: SecretView,
  }),
  versions: route({
    id: 'secrets.versions',
    method: 'GET',
    path: '/v1/projects/{projectID}/secrets/{name}/versions',
    summary: "A secret's versions",
    auth: 'any',
    params: SecretParams,
    status: 200,
    response: lazySchema(() => z.object({ name: z.string(), current_version: z.number().int(), versions: z.array(SecretVersion) })),
  }),
  delete: route({
    id: 'secrets.delete',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/secrets/{name}',
    summary: 'Delete a secret, destroying every version (project admin)',
    auth: 'any',
    params: SecretParams,
    status: 200,
    response: lazySchema(() => z.object({ name: z.string(), deleted: z.boolean(), note: Note })),
  }),
  reveal: route({
    id: 'secrets.reveal',
    method: 'POST',
    path: '/v1/projects/{projectID}/secrets/{name}:reveal',
    summary: 'Reveal a value, audited and fail-closed (project admin); a malformed body reveals the current version',
    auth: 'any',
    params: SecretParams,
    body: RevealBody,
    status: 200,
    response: lazySchema(() => z.object({ name: z.string(), version: z.number().int(), value: z.string(), note: Note })),
  }),
  issueToken: route({
    id: 'secrets.issueToken',
    method: 'POST',
    path: '/v1/projects/{projectID}/secrets/{name}:issue-token',
    summary: 'Mint a short-lived token that reads this one secret from the store',
    auth: 'any',
    params: SecretParams,
    body: TokenBody,
    status: 200,
    response: TokenResponse,
  }),
  issueProjectToken: route({
    id: 'secrets.issueProjectToken',
    method: 'POST',
    path: '/v1/projects/{projectID}/secrets:issue-token',
    summary: "Mint a short-lived token that reads every secret of the project (members and the project's workload key)",
    auth: 'any',
    params: ProjectParams,
    body: TokenBody,
    status: 200,
    response: TokenResponse,
  }),
};

export const secretMapRoutes = {
  list: route({
    id: 'secretMaps.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/secret-maps',
    summary: "List a project's secret bindings",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ bindings: z.array(Binding), next_page_token: z.string().optional() })),
  }),
  agentList: route({
    id: 'secretMaps.agentList',
    method: 'GET',
    path: '/v1/projects/{projectID}/agents/{agent}/secret-maps',
    summary: "One agent's secret bindings",
    auth: 'any',
    params: AgentParams,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), bindings: z.array(Binding) })),
  }),
  put: route({
    id: 'secretMaps.put',
    method: 'PUT',
    path: '/v1/projects/{projectID}/agents/{agent}/secret-maps/{envName}',
    summary: 'Bind a secret to an environment variable of an agent (pinned version or newest)',
    auth: 'any',
    params: SecretMapParams,
    body: BindBody,
    bodyLimit: SECRET_MAP_BODY_LIMIT,
    status: 200,
    response: lazySchema(() => z.object({ binding: Binding, note: Note })),
  }),
  delete: route({
    id: 'secretMaps.delete',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/agents/{agent}/secret-maps/{envName}',
    summary: 'Unbind and revoke at once: the key leaves the agent and a revision rolls',
    auth: 'any',
    params: SecretMapParams,
    status: 200,
    response: lazySchema(() => z.object({
      agent: z.string(),
      env_name: z.string(),
      deleted: z.boolean(),
      revoked: z.boolean(),
      revision_rolled: z.boolean(),
      note: Note,
    })),
  }),
  apply: route({
    id: 'secretMaps.apply',
    method: 'POST',
    path: '/v1/projects/{projectID}/agents/{agent}/secret-maps:apply',
    summary: "Write every bound value into the agent's environment, all or nothing, and roll a revision",
    auth: 'any',
    params: AgentParams,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), applied: z.array(ApplyRow), revision_rolled: z.boolean(), note: Note })),
  }),
};

/**
 * Vault KV version 2 read API served by the daemon under `/vault` so that a stock Vault client
 * with its address set to `read.addr` reads platform secrets (docs/decisions/secrets.md).
 */
export const VAULT_PREFIX = '/vault';
export const VAULT_MOUNT = 'secret';

export const vaultRoutes = {
  read: route({
    id: 'vault.kv2.read',
    method: 'GET',
    path: '/vault/v1/{mount}/data/{path...}',
    summary: 'Vault KV v2 read with X-Vault-Token (a secret read token); Vault-style errors {errors: [...]}',
    auth: 'none',
    params: lazySchema(() => z.object({ mount: z.string(), path: z.string() })),
    query: lazySchema(() => z.object({ version: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({
      request_id: z.string(),
      data: z.object({
        data: z.record(z.string(), z.string()),
        metadata: z.object({ created_time: Timestamp, deletion_time: z.string(), destroyed: z.boolean(), version: z.number().int() }),
      }),
    })),
  }),
  metadata: route({
    id: 'vault.kv2.metadata',
    method: 'GET',
    path: '/vault/v1/{mount}/metadata/{path...}',
    summary: 'Vault KV v2 metadata of one secret, or with ?list=true (or the LIST method) the secret names under a project',
    auth: 'none',
    params: lazySchema(() => z.object({ mount: z.string(), path: z.string() })),
    query: lazySchema(() => z.object({ list: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({
      request_id: z.string(),
      data: z.union([
        z.object({ keys: z.array(z.string()) }),
        z.object({ current_version: z.number().int(), versions: z.record(z.string(), z.object({ created_time: Timestamp, deletion_time: z.string(), destroyed: z.boolean() })) }),
      ]),
    })),
  }),
  lookupSelf: route({
    id: 'vault.token.lookup-self',
    method: 'GET',
    path: '/vault/v1/auth/token/lookup-self',
    summary: "Vault token lookup-self: the read token's scope and remaining ttl (hvac's is_authenticated)",
    auth: 'none',
    status: 200,
    response: lazySchema(() => z.object({ request_id: z.string(), data: z.object({ id: z.string(), ttl: z.number().int(), expire_time: Timestamp, renewable: z.boolean() }) })),
  }),
  renewSelf: route({
    id: 'vault.token.renew-self',
    method: 'POST',
    path: '/vault/v1/auth/token/renew-self',
    summary: 'Vault token renew-self: extends a read token by increment (default 300 s), never past 3600 s after it was issued',
    auth: 'none',
    status: 200,
    response: lazySchema(() => z.object({ request_id: z.string(), auth: z.object({ client_token: z.string(), lease_duration: z.number().int(), renewable: z.boolean() }) })),
  }),
  mountInfo: route({
    id: 'vault.sys.mount-info',
    method: 'GET',
    path: '/vault/v1/sys/internal/ui/mounts/{path...}',
    summary: "The mount a path lives on (the vault CLI's kv preflight): secret/ is KV version 2",
    auth: 'none',
    params: lazySchema(() => z.object({ path: z.string() })),
    status: 200,
    response: lazySchema(() => z.object({ request_id: z.string(), data: z.object({ path: z.string(), type: z.string(), options: z.object({ version: z.string() }) }) })),
  }),
  sealStatus: route({
    id: 'vault.sys.seal-status',
    method: 'GET',
    path: '/vault/v1/sys/seal-status',
    summary: 'Vault seal status of the project secret store (no token needed)',
    auth: 'none',
    status: 200,
    response: lazySchema(() => z.object({ type: z.string(), initialized: z.boolean(), sealed: z.boolean(), version: z.string() })),
  }),
  health: route({
    id: 'vault.sys.health',
    method: 'GET',
    path: '/vault/v1/sys/health',
    summary: 'Vault health: 200 unsealed, 503 sealed, 501 not configured (sealedcode, uninitcode, activecode override them)',
    auth: 'none',
    query: lazySchema(() => z.object({
      standbyok: z.string().optional(),
      activecode: z.string().optional(),
      standbycode: z.string().optional(),
      sealedcode: z.string().optional(),
      uninitcode: z.string().optional(),
      drsecondarycode: z.string().optional(),
      performancestandbycode: z.string().optional(),
    })),
    status: 200,
    response: lazySchema(() => z.object({ initialized: z.boolean(), sealed: z.boolean(), standby: z.boolean(), server_time_utc: z.number().int(), version: z.string() })),
  }),
};

/**
 * Any other method or path under `/vault/v1/`: a Vault-shaped 404 (`{errors: [...]}`) instead of
 * the platform envelope, so a Vault client reports it as Vault would.
 */
export const vaultFallbackRoutes = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).map((method) =>
  route({
    id: `vault.unsupported.${method.toLowerCase()}`,
    method,
    path: '/vault/v1/{rest...}',
    summary: 'Vault paths this store does not serve: 404 with Vault errors',
    auth: 'none',
    params: lazySchema(() => z.object({ rest: z.string() })),
    status: 404,
    response: lazySchema(() => z.object({ errors: z.array(z.string()) })),
  }),
);
