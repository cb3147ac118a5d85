import type { PageQuery } from '../../../api/common.js';
import { ENDPOINT_NAME_RE, HOSTNAME_RE, type AuthSettings, type EndpointCreateBody, type EndpointPatchBody, type RateLimit } from '../../../api/gateway.js';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { ProjectAccess } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import type { Principal } from '../auth/principal.js';
import { normaliseCidr } from './allowlist.js';
import { keyState, keyView, mintSecret } from './keys.js';
import { gatewayStore, type EndpointRow, type KeyRow } from './store.js';
import { checkTarget } from './targets.js';
import { domainView, endpointView } from './view.js';
import type { ProjectCredentials } from './project-credentials.js';

export interface Deps {
  ctx: AreaContext;
  credentials: ProjectCredentials;
  /** Told when an endpoint's serving settings change, so cached decisions (key sets, limits) are dropped. */
  changed(endpointId: string): void;
}

const member = (d: Deps, p: Principal, ref: string) => accessProject(d.ctx, p, ref, 'member');
/** Spec 2 §5: every gateway state change needs project admin. */
const admin = (d: Deps, p: Principal, ref: string) => accessProject(d.ctx, p, ref, 'resource-admin');

const endpointNotFound = (name: string) => notFound(`gateway endpoint ${name} not found`);

function endpointOr404(d: Deps, projectId: string, name: string): EndpointRow {
  const e = gatewayStore.byName(d.ctx.db, projectId, name);
  if (!e) throw endpointNotFound(name);
  return e;
}

/** Auth settings as stored: jwt needs its three fields and at least one audience (spec 2 §4.5). */
function checkAuth(auth: AuthSettings | undefined): AuthSettings {
  const a = auth ?? { mode: 'none' as const };
  if (a.mode !== 'jwt') {
    if (a.jwt) throw badRequest(`auth.jwt is only for auth.mode jwt (mode is ${a.mode})`);
    return { mode: a.mode };
  }
  if (!a.jwt) throw badRequest('auth.jwt (issuer, jwks_uri, audiences) is required with auth.mode jwt');
  if (!a.jwt.audiences?.length) throw badRequest('jwt without audience: auth.jwt.audiences needs at least one entry');
  if (!/^https?:$/.test(new URL(a.jwt.jwks_uri).protocol)) throw badRequest('auth.jwt.jwks_uri must be an http or https URL');
  return { mode: 'jwt', jwt: { issuer: a.jwt.issuer, jwks_uri: a.jwt.jwks_uri, audiences: a.jwt.audiences } };
}

/** All three fields or none (spec 2 §2.5); per-key limits need keys. */
function checkRateLimit(r: Partial<RateLimit> | null | undefined, auth: AuthSettings): RateLimit | null {
  if (!r) return null;
  const missing = (['requests', 'unit', 'key'] as const).filter((k) => r[k] === undefined);
  if (missing.length === 3) return null;
  if (missing.length) throw badRequest(`rate_limit needs requests, unit and key together (missing ${missing.join(', ')})`);
  if (r.key === 'api_key' && auth.mode !== 'apikey') throw badRequest('rate_limit.key api_key needs auth.mode apikey (use client_ip otherwise)');
  return { requests: r.requests!, unit: r.unit!, key: r.key! };
}

function normaliseHostname(raw: string): string {
  const h = raw.trim().toLowerCase().replace(/\.$/, '');
  if (!HOSTNAME_RE.test(h)) throw badRequest(`hostname ${JSON.stringify(raw)} is not a DNS name of at least two labels`);
  return h;
}

/** A custom hostname must be a claim of this project (verified or not: serving waits for verification). */
function claimedHostname(d: Deps, projectId: string, raw: string): string {
  const h = normaliseHostname(raw);
  const claim = gatewayStore.domain(d.ctx.db, h);
  if (!claim || claim.project_id !== projectId) throw badRequest(`unclaimed custom hostname ${h}: claim it first (POST /gateway/domains)`);
  return h;
}

const liveKeys = (d: Deps, e: EndpointRow) => gatewayStore.keys(d.ctx.db, e.id).filter((k) => keyState(k, d.ctx.clock.now()) === 'live');

function requireKeysToPublish(d: Deps, e: EndpointRow, auth: AuthSettings): void {
  if (auth.mode === 'apikey' && !liveKeys(d, e).length) throw badRequest(`endpoint ${e.name} uses apikey auth and has no live key: create one (POST .../keys) before publishing`);
}

export function list(d: Deps, p: Principal, ref: string, query: PageQuery) {
  const access = member(d, p, ref);
  const page = d.ctx.pager.parse(query, `gateway-endpoints:${access.project.id}`);
  const { items, next_page_token } = d.ctx.pager.slice(page, gatewayStore.list(d.ctx.db, access.project.id, page.size + 1, page.offset));
  return { endpoints: items.map((e) => endpointView(d.ctx, access.project.short, e)), ...(next_page_token ? { next_page_token } : {}) };
}

export function create(d: Deps, p: Principal, ref: string, body: EndpointCreateBody) {
  const access = admin(d, p, ref);
  const projectId = access.project.id;
  if (!ENDPOINT_NAME_RE.test(body.name)) throw badRequest('name must be 1 to 40 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen');
  const target = checkTarget(d.ctx, projectId, body.target);
  const auth = checkAuth(body.auth);
  const rateLimit = checkRateLimit(body.rate_limit, auth);
  const allow = (body.ip_allowlist ?? []).map((c) => normaliseCidr(c));
  let hostname = '';
  if (body.domain?.kind === 'custom') {
    if (!body.domain.hostname) throw badRequest('domain.hostname is required with domain.kind custom');
    hostname = claimedHostname(d, projectId, body.domain.hostname);
  } else if (body.domain?.hostname) throw badRequest('domain.hostname is only for domain.kind custom');
  const now = isoNow(d.ctx.clock);
  const row: EndpointRow = {
    id: newId(),
    project_id: projectId,
    name: body.name,
    target_kind: target.kind,
    target_name: target.name,
    hostname,
    auth: JSON.stringify(auth),
    ip_allowlist: JSON.stringify(allow),
    rate_limit: rateLimit ? JSON.stringify(rateLimit) : null,
    published: 0,
    credential_sealed: '',
    created_at: now,
    updated_at: now,
  };
  tx(d.ctx.db, () => {
    if (gatewayStore.byName(d.ctx.db, projectId, body.name)) throw conflict(`gateway endpoint ${body.name} already exists in this project`);
    row.credential_sealed = d.credentials.provision(access, row);
    gatewayStore.insert(d.ctx.db, row);
  });
  return endpointView(d.ctx, access.project.short, row);
}

export function get(d: Deps, p: Principal, ref: string, name: string) {
  const access = member(d, p, ref);
  const e = endpointOr404(d, access.project.id, name);
  const now = d.ctx.clock.now();
  const claim = e.hostname ? gatewayStore.domain(d.ctx.db, e.hostname) : undefined;
  return {
    ...endpointView(d.ctx, access.project.short, e),
    keys: gatewayStore.keys(d.ctx.db, e.id).map((k) => keyView(k, now)),
    domain: claim ? domainView(d.ctx, access.project.short, claim) : null,
  };
}

export function patch(d: Deps, p: Principal, ref: string, name: string, body: EndpointPatchBody) {
  const access = admin(d, p, ref);
  return tx(d.ctx.db, () => patchIn(d, access, name, body));
}

function patchIn(d: Deps, access: ProjectAccess, name: string, body: EndpointPatchBody) {
  const e = endpointOr404(d, access.project.id, name);
  const next: EndpointRow = { ...e };
  if (body.target) {
    const t = checkTarget(d.ctx, access.project.id, body.target);
    next.target_kind = t.kind;
    next.target_name = t.name;
  }
  const auth = body.auth ? checkAuth(body.auth) : (JSON.parse(e.auth) as AuthSettings);
  next.auth = JSON.stringify(auth);
  if (body.ip_allowlist) next.ip_allowlist = JSON.stringify(body.ip_allowlist.map((c) => normaliseCidr(c)));
  const rate = body.rate_limit === undefined ? (e.rate_limit ? (JSON.parse(e.rate_limit) as RateLimit) : null) : body.rate_limit;
  const checked = checkRateLimit(rate, auth);
  next.rate_limit = checked ? JSON.stringify(checked) : null;
  if (body.hostname !== undefined) next.hostname = body.hostname === null || body.hostname === '' ? '' : claimedHostname(d, access.project.id, body.hostname);
  if (e.published) requireKeysToPublish(d, e, auth);
  next.updated_at = isoNow(d.ctx.clock);
  next.credential_sealed = d.credentials.provision(access, next);
  gatewayStore.update(d.ctx.db, next);
  d.changed(e.id);
  return endpointView(d.ctx, access.project.short, next);
}

export function remove(d: Deps, p: Principal, ref: string, name: string): void {
  const access = admin(d, p, ref);
  const e = endpointOr404(d, access.project.id, name);
  tx(d.ctx.db, () => {
    gatewayStore.revokeAll(d.ctx.db, e.id, isoNow(d.ctx.clock));
    d.credentials.release(e);
    gatewayStore.remove(d.ctx.db, e.id);
  });
  d.changed(e.id);
}

export function setPublished(d: Deps, p: Principal, ref: string, name: string, published: boolean) {
  const access = admin(d, p, ref);
  const next = tx(d.ctx.db, () => {
    const e = endpointOr404(d, access.project.id, name);
    if (published) requireKeysToPublish(d, e, JSON.parse(e.auth) as AuthSettings);
    const row = { ...e, published: published ? 1 : 0, updated_at: isoNow(d.ctx.clock) };
    gatewayStore.update(d.ctx.db, row);
    return row;
  });
  const e = next;
  d.changed(e.id);
  return endpointView(d.ctx, access.project.short, next);
}

export function keys(d: Deps, p: Principal, ref: string, name: string) {
  const access = member(d, p, ref);
  const e = endpointOr404(d, access.project.id, name);
  const now = d.ctx.clock.now();
  return { keys: gatewayStore.keys(d.ctx.db, e.id).map((k) => keyView(k, now)) };
}

function mintKeyRow(d: Deps, e: EndpointRow, note: string, expiresAt: string | null) {
  const minted = mintSecret();
  const row: KeyRow = {
    id: newId(),
    endpoint_id: e.id,
    key_id: minted.keyId,
    secret_hash: minted.hash,
    note,
    created_at: isoNow(d.ctx.clock),
    expires_at: expiresAt,
    superseded_until: null,
    revoked_at: null,
  };
  gatewayStore.insertKey(d.ctx.db, row);
  return { key: keyView(row, d.ctx.clock.now()), secret: minted.full, note };
}

export function createKey(d: Deps, p: Principal, ref: string, name: string, body: { note?: string; expires_in_days?: number }) {
  const access = admin(d, p, ref);
  const e = endpointOr404(d, access.project.id, name);
  const expires = body.expires_in_days ? new Date(d.ctx.clock.now() + body.expires_in_days * 86_400_000).toISOString() : null;
  return mintKeyRow(d, e, body.note ?? '', expires);
}

/**
 * Rotation (spec 2 §3): a successor key with the same note and expiry works at once; the old row is
 * marked superseded and keeps working until the overlap ends (or its own expiry, if sooner).
 */
export function rotateKey(d: Deps, p: Principal, ref: string, name: string, keyId: string) {
  const access = admin(d, p, ref);
  const e = endpointOr404(d, access.project.id, name);
  const old = gatewayStore.key(d.ctx.db, e.id, keyId);
  if (!old) throw notFound(`key ${keyId} not found on endpoint ${name}`);
  const state = keyState(old, d.ctx.clock.now());
  if (state !== 'live') throw conflict(`key ${keyId} is ${state}: only a live key can be rotated`);
  if (old.superseded_until) throw conflict(`key ${keyId} was already rotated: rotate its successor instead`);
  return tx(d.ctx.db, () => {
    gatewayStore.supersede(d.ctx.db, old.id, new Date(d.ctx.clock.now() + d.ctx.config.gateway.keyOverlapSeconds * 1000).toISOString());
    return mintKeyRow(d, e, old.note, old.expires_at);
  });
}

export function revokeKey(d: Deps, p: Principal, ref: string, name: string, keyId: string): void {
  const access = admin(d, p, ref);
  const e = endpointOr404(d, access.project.id, name);
  const k = gatewayStore.key(d.ctx.db, e.id, keyId);
  if (!k || k.revoked_at) throw notFound(`key ${keyId} not found on endpoint ${name}`);
  gatewayStore.revokeKey(d.ctx.db, k.id, isoNow(d.ctx.clock));
}

export function claimDomain(d: Deps, p: Principal, ref: string, body: { hostname: string; note?: string }) {
  const access = admin(d, p, ref);
  const hostname = normaliseHostname(body.hostname);
  const zone = d.ctx.config.gateway.domain;
  if (hostname === zone || hostname.endsWith(`.${zone}`)) throw badRequest(`hostname ${hostname} is inside the platform zone ${zone}: shared addresses need no claim`);
  const row = { hostname, project_id: access.project.id, note: body.note ?? '', verified_at: null, checked_at: null, created_at: isoNow(d.ctx.clock) };
  tx(d.ctx.db, () => {
    // 409 whoever holds it: a claim of another project is not hidden, since hostnames are global.
    if (gatewayStore.domain(d.ctx.db, hostname)) throw conflict(`hostname ${hostname} is already claimed`);
    gatewayStore.insertDomain(d.ctx.db, row);
  });
  return domainView(d.ctx, access.project.short, row);
}

export function domains(d: Deps, p: Principal, ref: string, query: PageQuery) {
  const access = member(d, p, ref);
  const page = d.ctx.pager.parse(query, `gateway-domains:${access.project.id}`);
  const { items, next_page_token } = d.ctx.pager.slice(page, gatewayStore.domains(d.ctx.db, access.project.id, page.size + 1, page.offset));
  return { domains: items.map((r) => domainView(d.ctx, access.project.short, r)), ...(next_page_token ? { next_page_token } : {}) };
}

/** Refused (409) while an endpoint is published on it; unpublished endpoints on it fall back to the shared address. */
export function releaseDomain(d: Deps, p: Principal, ref: string, raw: string): void {
  const access: ProjectAccess = admin(d, p, ref);
  const hostname = raw.trim().toLowerCase().replace(/\.$/, '');
  const claim = gatewayStore.domain(d.ctx.db, hostname);
  if (!claim || claim.project_id !== access.project.id) throw notFound(`domain ${hostname} not found`);
  const published = gatewayStore.publishedOn(d.ctx.db, access.project.id, hostname);
  if (published.length) throw conflict(`domain ${hostname} still serves published endpoint ${published.map((e) => e.name).join(', ')}: unpublish it or move it to another hostname first`);
  tx(d.ctx.db, () => {
    for (const { name } of gatewayStore.usersOf(d.ctx.db, access.project.id, hostname)) {
      const e = gatewayStore.byName(d.ctx.db, access.project.id, name)!;
      gatewayStore.update(d.ctx.db, { ...e, hostname: '', updated_at: isoNow(d.ctx.clock) });
    }
    gatewayStore.removeDomain(d.ctx.db, hostname);
  });
}
