import { z } from 'zod';
import { KiB, route } from './contract.js';
import { PageQuery, Timestamp, printable } from './common.js';
import { ProjectParams } from './projects.js';
import { lazySchema } from './lazy.js';

/** Gateway: endpoints, their keys and custom domains (spec 2 §2.5, §3, §4.5, §5, §7, §8). */

export const GATEWAY_TARGET_KINDS = ['agent', 'function', 'serverless', 'container', 'vectordb', 'pubsub', 'memorystore'] as const;
export type GatewayTargetKind = (typeof GATEWAY_TARGET_KINDS)[number];
/** Spec 2 §2.5: vectordb and pubsub take no name (they front the project's own API). */
export const UNNAMED_TARGET_KINDS: readonly GatewayTargetKind[] = ['vectordb', 'pubsub'];
export const GATEWAY_AUTH_MODES = ['none', 'apikey', 'jwt'] as const;
export const RATE_UNITS = ['second', 'minute', 'hour', 'day'] as const;
export const RATE_KEYS = ['client_ip', 'api_key'] as const;
export const ENDPOINT_STATES = ['unpublished', 'pending_verification', 'programming', 'ready', 'failed'] as const;
export const KEY_STATES = ['live', 'expired', 'revoked'] as const;
export const GATEWAY_SECRET_PREFIX = 'gk_secret_';
/** The header an apikey endpoint reads (Authorization: Bearer is accepted too). */
export const GATEWAY_KEY_HEADER = 'x-api-key';

/** Also the first label of the shared address `<name>-<short>.<gateway_domain>`, so a DNS label. */
export const ENDPOINT_NAME_RE = /^[a-z]([a-z0-9-]{0,38}[a-z0-9])?$/;
/** A DNS name of at least two labels, lowercase; a trailing dot is not part of the stored name. */
export const HOSTNAME_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

export const EndpointParams = lazySchema(() => ProjectParams.extend({ name: z.string() }));
export const KeyParams = lazySchema(() => EndpointParams.extend({ keyID: z.string() }));
export const DomainParams = lazySchema(() => ProjectParams.extend({ domain: z.string() }));

/** kind is checked by the handler so the 400 reads "unknown target.kind" with the accepted list. */
export const Target = lazySchema(() => z.strictObject({ kind: z.string(), name: z.string().optional() }));
export type Target = z.infer<typeof Target>;

export const JwtSettings = lazySchema(() => z.strictObject({
  issuer: z.string().min(1),
  jwks_uri: z.string().url(),
  audiences: z.array(z.string().min(1)).max(16).optional().describe('at least one required (checked by the handler: "jwt without audience")'),
}));
export type JwtSettings = z.infer<typeof JwtSettings>;

export const AuthSettings = lazySchema(() => z.strictObject({
  mode: z.enum(GATEWAY_AUTH_MODES),
  jwt: JwtSettings.optional(),
}));
export type AuthSettings = z.infer<typeof AuthSettings>;

/** All three fields or none (spec 2 §2.5); partial objects are the handler's 400 naming what is missing. */
export const RateLimit = lazySchema(() => z.strictObject({
  requests: z.number().int().min(1).max(1_000_000_000).optional(),
  unit: z.enum(RATE_UNITS).optional(),
  key: z.enum(RATE_KEYS).optional(),
}));
export type RateLimit = { requests: number; unit: (typeof RATE_UNITS)[number]; key: (typeof RATE_KEYS)[number] };

export const DomainChoice = lazySchema(() => z.strictObject({
  kind: z.enum(['shared', 'custom']),
  hostname: z.string().optional(),
}));

const Cidrs = lazySchema(() => z.array(z.string().max(64)).max(256));

export const EndpointCreateBody = lazySchema(() => z.strictObject({
  name: printable(z.string()),
  target: Target,
  domain: DomainChoice.optional(),
  auth: AuthSettings.optional(),
  ip_allowlist: Cidrs.optional(),
  rate_limit: RateLimit.nullable().optional(),
}));
export type EndpointCreateBody = z.infer<typeof EndpointCreateBody>;

export const EndpointPatchBody = lazySchema(() => z.strictObject({
  auth: AuthSettings.optional(),
  ip_allowlist: Cidrs.optional(),
  rate_limit: RateLimit.nullable().optional().describe('null removes the limit'),
  hostname: z.string().nullable().optional().describe('a claimed custom hostname of the project; null returns to the shared address'),
  target: Target.optional(),
}));
export type EndpointPatchBody = z.infer<typeof EndpointPatchBody>;

export const GatewayKey = lazySchema(() => z.object({
  key_id: z.string(),
  note: z.string(),
  state: z.enum(KEY_STATES).describe('derived on read from the clock'),
  created_at: Timestamp,
  expires_at: Timestamp.optional().describe('absent: no expiry; on a superseded key, the end of the rotation overlap when earlier'),
  superseded: z.boolean().describe('true on the outgoing half of a rotation'),
}));
export type GatewayKey = z.infer<typeof GatewayKey>;

export const DomainRecord = lazySchema(() => z.object({ type: z.literal('CNAME'), name: z.string(), value: z.string() }));

export const GatewayDomain = lazySchema(() => z.object({
  hostname: z.string(),
  verified: z.boolean(),
  record: DomainRecord,
  note: z.string(),
  verified_at: Timestamp.optional(),
  created_at: Timestamp,
}));
export type GatewayDomain = z.infer<typeof GatewayDomain>;

export const Endpoint = lazySchema(() => z.object({
  name: z.string(),
  resource_path: z.string(),
  project_id: z.string().describe('project short'),
  url: z.string(),
  hostname: z.string(),
  domain_kind: z.enum(['shared', 'custom']),
  published: z.boolean(),
  state: z.enum(ENDPOINT_STATES),
  message: z.string().optional().describe('why the endpoint is not ready'),
  target: z.object({ kind: z.enum(GATEWAY_TARGET_KINDS), name: z.string().optional() }),
  auth: z.object({ mode: z.enum(GATEWAY_AUTH_MODES), jwt: z.object({ issuer: z.string(), jwks_uri: z.string(), audiences: z.array(z.string()) }).optional() }),
  ip_allowlist: z.array(z.string()),
  rate_limit: z.object({ requests: z.number().int(), unit: z.enum(RATE_UNITS), key: z.enum(RATE_KEYS) }).optional(),
  created_at: Timestamp,
  updated_at: Timestamp,
}));
export type Endpoint = z.infer<typeof Endpoint>;

export const EndpointDetail = lazySchema(() => Endpoint.extend({ keys: z.array(GatewayKey), domain: GatewayDomain.nullable() }));
export type EndpointDetail = z.infer<typeof EndpointDetail>;

export const KeyCreateBody = lazySchema(() => z.strictObject({
  note: printable(z.string().max(256)).optional(),
  expires_in_days: z.number().int().min(1).max(3650).optional(),
}));

export const KeySecret = lazySchema(() => z.object({ key: GatewayKey, secret: z.string().describe('gk_secret_…; shown only in this answer'), note: z.string() }));

export const DomainClaimBody = lazySchema(() => z.strictObject({ hostname: z.string(), note: printable(z.string().max(256)).optional() }));

const base = '/v1/projects/{projectID}/gateway';
const GATEWAY_BODY_LIMIT = 16 * KiB;

export const gatewayRoutes = {
  list: route({
    id: 'gateway.endpoints.list',
    method: 'GET',
    path: `${base}/endpoints`,
    summary: "List a project's gateway endpoints, unpublished ones included",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ endpoints: z.array(Endpoint), next_page_token: z.string().optional() })),
  }),
  create: route({
    id: 'gateway.endpoints.create',
    method: 'POST',
    path: `${base}/endpoints`,
    summary: 'Create an endpoint: reserves its address, unpublished (project admin)',
    auth: 'any',
    params: ProjectParams,
    body: EndpointCreateBody,
    bodyLimit: GATEWAY_BODY_LIMIT,
    status: 201,
    response: Endpoint,
  }),
  get: route({
    id: 'gateway.endpoints.get',
    method: 'GET',
    path: `${base}/endpoints/{name}`,
    summary: 'One endpoint with its keys (metadata) and the domain claim behind a custom hostname',
    auth: 'any',
    params: EndpointParams,
    status: 200,
    response: EndpointDetail,
  }),
  patch: route({
    id: 'gateway.endpoints.patch',
    method: 'PATCH',
    path: `${base}/endpoints/{name}`,
    summary: 'Change auth, allow list, rate limit, hostname or target; omitted fields keep their values (project admin)',
    auth: 'any',
    params: EndpointParams,
    body: EndpointPatchBody,
    bodyLimit: GATEWAY_BODY_LIMIT,
    status: 200,
    response: Endpoint,
  }),
  delete: route({
    id: 'gateway.endpoints.delete',
    method: 'DELETE',
    path: `${base}/endpoints/{name}`,
    summary: 'Delete an endpoint: releases its address and revokes all its keys (project admin)',
    auth: 'any',
    params: EndpointParams,
    status: 204,
    response: lazySchema(() => z.undefined()),
  }),
  publish: route({
    id: 'gateway.endpoints.publish',
    method: 'POST',
    path: `${base}/endpoints/{name}/publish`,
    summary: 'Serve the endpoint at its address (project admin)',
    auth: 'any',
    params: EndpointParams,
    status: 200,
    response: Endpoint,
  }),
  unpublish: route({
    id: 'gateway.endpoints.unpublish',
    method: 'POST',
    path: `${base}/endpoints/{name}/unpublish`,
    summary: 'Stop serving the endpoint; its address stays reserved (project admin)',
    auth: 'any',
    params: EndpointParams,
    status: 200,
    response: Endpoint,
  }),
  keys: route({
    id: 'gateway.keys.list',
    method: 'GET',
    path: `${base}/endpoints/{name}/keys`,
    summary: "An endpoint's keys (metadata only)",
    auth: 'any',
    params: EndpointParams,
    status: 200,
    response: lazySchema(() => z.object({ keys: z.array(GatewayKey) })),
  }),
  createKey: route({
    id: 'gateway.keys.create',
    method: 'POST',
    path: `${base}/endpoints/{name}/keys`,
    summary: 'Mint a key; the secret is shown only in this answer (project admin)',
    auth: 'any',
    params: EndpointParams,
    body: KeyCreateBody,
    status: 201,
    response: KeySecret,
  }),
  rotateKey: route({
    id: 'gateway.keys.rotate',
    method: 'POST',
    path: `${base}/endpoints/{name}/keys/{keyID}/rotate-credential`,
    summary: 'Mint the successor of a key; the old secret keeps working for the rotation overlap (project admin)',
    auth: 'any',
    params: KeyParams,
    status: 200,
    response: KeySecret,
  }),
  revokeKey: route({
    id: 'gateway.keys.revoke',
    method: 'DELETE',
    path: `${base}/endpoints/{name}/keys/{keyID}`,
    summary: 'Revoke a key at once (project admin)',
    auth: 'any',
    params: KeyParams,
    status: 204,
    response: lazySchema(() => z.undefined()),
  }),
  claimDomain: route({
    id: 'gateway.domains.claim',
    method: 'POST',
    path: `${base}/domains`,
    summary: 'Claim a custom hostname; verified once its CNAME record resolves (project admin)',
    auth: 'any',
    params: ProjectParams,
    body: DomainClaimBody,
    status: 201,
    response: GatewayDomain,
  }),
  domains: route({
    id: 'gateway.domains.list',
    method: 'GET',
    path: `${base}/domains`,
    summary: "A project's claimed hostnames",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ domains: z.array(GatewayDomain), next_page_token: z.string().optional() })),
  }),
  releaseDomain: route({
    id: 'gateway.domains.release',
    method: 'DELETE',
    path: `${base}/domains/{domain}`,
    summary: 'Release a hostname; refused while an endpoint is published on it (project admin)',
    auth: 'any',
    params: DomainParams,
    status: 204,
    response: lazySchema(() => z.undefined()),
  }),
};
