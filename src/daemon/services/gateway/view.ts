import type { Endpoint, GatewayDomain } from '../../../api/gateway.js';
import type { AreaContext } from '../../area.js';
import { cnameTarget, sharedHostname, urlOf } from './address.js';
import { allowlistOf, authOf, gatewayStore, rateLimitOf, type DomainRow, type EndpointRow } from './store.js';
import { targetProblem } from './targets.js';

/**
 * The state word of an endpoint (docs/decisions/gateway.md, "States"): unpublished until
 * published; on a custom hostname, pending_verification until the sweep verified it; failed when
 * its target cannot be reached (gone, or a kind with no HTTP face); else ready. `programming` is
 * the moment between publish and the Host table serving it: the table is read on every request,
 * so locally that moment is never observed.
 */
export function endpointState(ctx: AreaContext, e: EndpointRow): { state: Endpoint['state']; message?: string } {
  if (!e.published) return { state: 'unpublished' };
  if (e.hostname && !gatewayStore.domain(ctx.db, e.hostname)?.verified_at) {
    return { state: 'pending_verification', message: `waiting for the CNAME of ${e.hostname} to be verified` };
  }
  const problem = targetProblem(ctx, e.project_id, e.target_kind, e.target_name);
  return problem ? { state: 'failed', message: problem } : { state: 'ready' };
}

export function endpointView(ctx: AreaContext, short: string, e: EndpointRow): Endpoint {
  const hostname = e.hostname || sharedHostname(ctx.config, e.name, short);
  const auth = authOf(e);
  const rate = rateLimitOf(e);
  const { state, message } = endpointState(ctx, e);
  return {
    name: e.name,
    resource_path: `projects/${short}/gateway/endpoints/${e.name}`,
    project_id: short,
    url: urlOf(ctx.config, hostname),
    hostname,
    domain_kind: e.hostname ? 'custom' : 'shared',
    published: Boolean(e.published),
    state,
    ...(message ? { message } : {}),
    target: { kind: e.target_kind, ...(e.target_name ? { name: e.target_name } : {}) },
    auth: auth.mode === 'jwt' ? { mode: 'jwt', jwt: { issuer: auth.jwt!.issuer, jwks_uri: auth.jwt!.jwks_uri, audiences: auth.jwt!.audiences ?? [] } } : { mode: auth.mode },
    ip_allowlist: allowlistOf(e),
    ...(rate ? { rate_limit: rate } : {}),
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export function domainView(ctx: AreaContext, short: string, d: DomainRow): GatewayDomain {
  return {
    hostname: d.hostname,
    verified: Boolean(d.verified_at),
    record: { type: 'CNAME', name: d.hostname, value: cnameTarget(ctx.config, short) },
    note: d.note,
    ...(d.verified_at ? { verified_at: d.verified_at } : {}),
    created_at: d.created_at,
  };
}
