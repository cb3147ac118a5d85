import type { IncomingMessage } from 'node:http';
import { GATEWAY_KEY_HEADER, type RateLimit } from '../../../api/gateway.js';
import type { AreaContext } from '../../area.js';
import { ApiError } from '../../http/errors.js';
import type { RequestContext } from '../../http/router.js';
import { findProject } from '../accounts/access.js';
import { parseSharedHostname, requestHostname } from './address.js';
import { clientAddress, compileRanges, inRanges } from './allowlist.js';
import type { Forwarder, Hop } from './forward.js';
import type { JwtVerifier } from './jwt.js';
import { keyState, parseSecret, secretMatches } from './keys.js';
import type { ProjectCredentials } from './project-credentials.js';
import type { RateLimiter } from './rate-limiter.js';
import { allowlistOf, authOf, gatewayStore, rateLimitOf, type EndpointRow } from './store.js';
import { MEMORYSTORE_REFUSAL } from './targets.js';

export interface ServeDeps {
  ctx: AreaContext;
  forwarder: Forwarder;
  jwt: JwtVerifier;
  limiter: RateLimiter;
  credentials: ProjectCredentials;
  trusted: ReturnType<typeof compileRanges>;
}

/** The decision header `platform gateway test` shows: which endpoint answered and who it let in. */
export const DECISION_HEADER = 'x-gateway-decision';

const absent = (host: string) => new ApiError(404, `no gateway endpoint answers at ${host}`);

/**
 * Finds the published endpoint a Host names: `<name>-<short>.<zone>` on the shared zone, or a
 * custom hostname whose claim is verified and belongs to the endpoint's own project. Anything
 * else (unpublished, unverified, another project's claim) is the same 404 as an absent endpoint.
 */
export function endpointForHost(ctx: AreaContext, hostHeader: string): EndpointRow | undefined {
  const hostname = requestHostname(hostHeader);
  if (!hostname) return undefined;
  const shared = parseSharedHostname(ctx.config, hostname);
  if (shared) {
    const project = findProject(ctx.db, shared.short);
    if (!project || project.short !== shared.short) return undefined;
    const e = gatewayStore.byName(ctx.db, project.id, shared.name);
    // An endpoint moved to a custom hostname no longer answers on the shared one.
    return e && e.published && !e.hostname ? e : undefined;
  }
  const claim = gatewayStore.domain(ctx.db, hostname);
  if (!claim?.verified_at) return undefined;
  return gatewayStore.byHostname(ctx.db, hostname).find((e) => e.published && e.project_id === claim.project_id);
}

/** Whether a Host is the gateway's to answer (its zone, or any claimed custom hostname). */
export function isGatewayHost(ctx: AreaContext, hostHeader: string): boolean {
  const hostname = requestHostname(hostHeader);
  // The API's own addresses (an IP literal, localhost) are never a claim: no lookup for them.
  if (!hostname || hostname === 'localhost' || /^[\d.]+$/.test(hostname)) return false;
  const zone = ctx.config.gateway.domain;
  return hostname === zone || hostname.endsWith(`.${zone}`) || gatewayStore.domain(ctx.db, hostname) !== undefined;
}

function presentedKey(req: IncomingMessage): string | undefined {
  const header = req.headers[GATEWAY_KEY_HEADER];
  if (typeof header === 'string' && header) return header.trim();
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

function checkKey(d: ServeDeps, e: EndpointRow, token: string | undefined): { keyId: string } {
  if (!token) throw new ApiError(401, `this endpoint needs an API key: send it in ${GATEWAY_KEY_HEADER} or as Authorization: Bearer`, { 'WWW-Authenticate': 'Bearer' });
  const parsed = parseSecret(token);
  const row = parsed ? gatewayStore.keyById(d.ctx.db, parsed.keyId) : undefined;
  if (!parsed || !row || row.endpoint_id !== e.id || !secretMatches(parsed.secret, row.secret_hash)) throw new ApiError(401, 'invalid API key for this endpoint');
  const state = keyState(row, d.ctx.clock.now());
  if (state === 'revoked') throw new ApiError(401, `API key ${row.key_id} was revoked`);
  if (state === 'expired') throw new ApiError(401, row.superseded_until ? `API key ${row.key_id} was rotated and its overlap has ended: use its successor` : `API key ${row.key_id} has expired`);
  return { keyId: row.key_id };
}

function limitHeaders(r: { limit: number; remaining: number; resetSeconds: number }, limit: RateLimit): Record<string, string> {
  const window = { second: 1, minute: 60, hour: 3600, day: 86400 }[limit.unit];
  return {
    'RateLimit-Limit': String(r.limit),
    'RateLimit-Remaining': String(r.remaining),
    'RateLimit-Reset': String(r.resetSeconds),
    'RateLimit-Policy': `${r.limit};w=${window}`,
  };
}

/** Where the request goes for each target kind (docs/decisions/gateway.md, "Targets"). */
function hopFor(d: ServeDeps, e: EndpointRow, short: string, path: string, clientHost: string): Hop {
  const { config } = d.ctx;
  const main = `http://127.0.0.1:${config.port}`;
  switch (e.target_kind) {
    case 'agent':
    case 'function':
      // Served in-process through the agents area (serveGateway): never an HTTP hop.
      throw new Error(`${e.target_kind} targets are forwarded by the agents area`);
    case 'serverless':
    case 'container':
      // The internal listener routes by path whatever the Host, so the client's Host is kept (the
      // data plane derives X-Forwarded-Host from it).
      return { origin: `http://127.0.0.1:${config.internalPort}`, path: `/services/${short}/${e.target_name}${path}`, set: { host: clientHost }, drop: new Set() };
    case 'vectordb':
    case 'pubsub':
      return {
        origin: main,
        path: `/v1/projects/${e.project_id}/${e.target_kind === 'vectordb' ? 'indexes' : 'topics'}${path === '/' ? '' : path}`,
        set: { host: `127.0.0.1:${config.port}`, authorization: `Bearer ${d.credentials.bearer(e)}` },
        drop: new Set(['authorization', 'cookie']),
      };
    case 'memorystore':
      throw new ApiError(501, MEMORYSTORE_REFUSAL);
  }
}

/** A path that cannot climb out of the target's prefix once the receiver decodes it. */
function safePath(url: string | undefined): string {
  const raw = url && url.startsWith('/') ? url : '/';
  const pathname = raw.split('?', 1)[0]!;
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    throw new ApiError(400, 'malformed percent-encoding in the path');
  }
  if (decoded.split('/').some((s) => s === '..' || s === '.') || decoded.includes('\\')) throw new ApiError(400, 'the path may not contain . or .. segments');
  return raw;
}

/**
 * Serves one request on a gateway address: endpoint by Host, allow list (403), authentication
 * (401), rate limit (429), then the target. Refusals never reach the target.
 */
export async function serveGateway(d: ServeDeps, rc: RequestContext): Promise<void> {
  const { req, res } = rc;
  const host = String(req.headers.host ?? '');
  const e = endpointForHost(d.ctx, host);
  if (!e) throw absent(host);
  const project = findProject(d.ctx.db, e.project_id)!;
  const client = clientAddress(rc.ip, req.headers['x-forwarded-for'], d.trusted);
  const allow = allowlistOf(e);
  if (allow.length && (!client || !inRanges(client, compileRanges(allow)))) {
    throw new ApiError(403, `client address ${client?.toString() ?? rc.ip} is not in the endpoint's allow list`);
  }
  const auth = authOf(e);
  let keyId = '';
  let who = 'anonymous';
  const drop = new Set<string>();
  if (auth.mode === 'apikey') {
    keyId = checkKey(d, e, presentedKey(req)).keyId;
    who = `key ${keyId}`;
    // The endpoint's credential stays at the edge: the target never sees it.
    drop.add(GATEWAY_KEY_HEADER);
    if (!req.headers[GATEWAY_KEY_HEADER]) drop.add('authorization');
  } else if (auth.mode === 'jwt') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) throw new ApiError(401, 'this endpoint needs a JWT: send Authorization: Bearer <token>', { 'WWW-Authenticate': 'Bearer' });
    const v = await d.jwt.verify(m[1]!, auth.jwt!);
    if (!v.ok) throw new ApiError(401, `JWT refused: ${v.reason}`, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    who = `jwt sub ${v.subject || '(none)'}`;
  }
  const limit = rateLimitOf(e);
  if (limit) {
    const key = limit.key === 'api_key' ? `key:${keyId}` : `ip:${client?.toString() ?? rc.ip}`;
    const r = d.limiter.take(e.id, key, limit);
    for (const [k, v] of Object.entries(limitHeaders(r, limit))) res.setHeader(k, v);
    if (!r.allowed) throw new ApiError(429, `rate limit of ${limit.requests} per ${limit.unit} per ${limit.key === 'api_key' ? 'API key' : 'client address'} exceeded`, { 'Retry-After': String(r.resetSeconds) });
  }
  res.setHeader(DECISION_HEADER, `endpoint=${e.name}; auth=${auth.mode}; caller=${who}; target=${e.target_kind}${e.target_name ? `/${e.target_name}` : ''}`);
  const clientHost = requestHostname(host) ?? host;
  const path = safePath(req.url);
  const forwarded = { for: client?.toString() ?? rc.ip, proto: 'http', host: clientHost };
  if (e.target_kind === 'agent' || e.target_kind === 'function') {
    // The agents area forwards the request as it is (its own pooled client, instance secret, cold
    // start, timeouts): the gateway's changes are made on the request's headers first.
    if (!d.ctx.hooks.agentForward) throw new ApiError(503, 'agents are not available on this daemon');
    for (const h of drop) delete req.headers[h];
    const prior = req.headers['x-forwarded-for'];
    req.headers['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${forwarded.for}` : forwarded.for;
    req.headers['x-forwarded-proto'] = forwarded.proto;
    req.headers['x-forwarded-host'] = forwarded.host;
    return d.ctx.hooks.agentForward(rc, e.project_id, e.target_name, e.target_kind);
  }
  const hop = hopFor(d, e, project.short, path, clientHost);
  for (const h of drop) hop.drop.add(h);
  await d.forwarder.forward(req, res, hop, forwarded, `${e.target_kind}${e.target_name ? ` ${e.target_name}` : ''}`);
}
