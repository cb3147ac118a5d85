import { Args, Flags } from '@oclif/core';
import { RATE_KEYS, type AuthSettings, type Endpoint, type GatewayDomain, type GatewayKey } from '../api/gateway.js';
import { parseRate } from '../client/gateway.js';
import { UsageError } from '../client/errors.js';
import type { Column } from './render.js';

/** Shared pieces of the `platform gateway` commands (spec 2 §2.5, §4.5). */

export const endpointArg = Args.string({ description: 'endpoint name', required: true });
export const keyArg = Args.string({ description: 'key id (see `platform gateway keys list ENDPOINT`)', required: true });
export const hostnameArg = Args.string({ description: 'a DNS name, e.g. api.example.com', required: true });

/** The settings create and update share; each maps to one field of the endpoint. */
export const settingFlags = {
  auth: Flags.string({ description: 'who may call: none, apikey (keys from `gateway keys create`) or jwt (--issuer, --jwks-uri, --audience)', options: ['none', 'apikey', 'jwt'] }),
  issuer: Flags.string({ description: 'jwt: the required iss claim' }),
  'jwks-uri': Flags.string({ description: "jwt: address of the issuer's key set (JWKS)" }),
  audience: Flags.string({ description: 'jwt: an accepted aud claim (repeat for several)', multiple: true }),
  allow: Flags.string({ description: 'accepted client CIDR, IPv4 or IPv6 (repeat; none means any address)', multiple: true }),
  rate: Flags.string({ description: 'rate limit REQUESTS/UNIT, unit second, minute, hour or day (e.g. 100/minute)' }),
  'rate-key': Flags.string({ description: 'what the limit counts per', options: [...RATE_KEYS], default: 'client_ip' }),
};

export function endpointFields(e: Endpoint & { keys?: GatewayKey[]; domain?: GatewayDomain | null }): Record<string, unknown> {
  return {
    name: e.name,
    state: e.state,
    published: e.published,
    url: e.url,
    target: e.target.name ? `${e.target.kind}/${e.target.name}` : e.target.kind,
    auth: e.auth.mode === 'jwt' ? `jwt (issuer ${e.auth.jwt?.issuer}, audiences ${e.auth.jwt?.audiences.join(', ')})` : e.auth.mode,
    allow: e.ip_allowlist.length ? e.ip_allowlist : 'any address',
    rate_limit: e.rate_limit ? `${e.rate_limit.requests}/${e.rate_limit.unit} per ${e.rate_limit.key}` : 'none',
    message: e.message,
    keys: e.keys ? e.keys.map((k) => `${k.key_id} (${k.state}${k.superseded ? ', superseded' : ''})`) : undefined,
    domain: e.domain ? `${e.domain.hostname} (${e.domain.verified ? 'verified' : 'not verified'})` : undefined,
    created_at: e.created_at,
  };
}

export const endpointColumns: Column<Endpoint>[] = [
  { header: 'name', get: (e) => e.name },
  { header: 'state', get: (e) => e.state },
  { header: 'target', get: (e) => (e.target.name ? `${e.target.kind}/${e.target.name}` : e.target.kind) },
  { header: 'auth', get: (e) => e.auth.mode },
  { header: 'url', get: (e) => e.url },
];

export const keyColumns: Column<GatewayKey>[] = [
  { header: 'key id', get: (k) => k.key_id },
  { header: 'state', get: (k) => (k.superseded ? `${k.state} (superseded)` : k.state) },
  { header: 'note', get: (k) => k.note },
  { header: 'expires', get: (k) => k.expires_at ?? 'never' },
  { header: 'created', get: (k) => k.created_at },
];

export const domainColumns: Column<GatewayDomain>[] = [
  { header: 'hostname', get: (d) => d.hostname },
  { header: 'verified', get: (d) => d.verified },
  { header: 'record', get: (d) => `${d.record.name} CNAME ${d.record.value}` },
  { header: 'note', get: (d) => d.note },
];


/** The body fields the shared setting flags stand for (only those given). */
export function settingsBody(flags: { auth?: string; issuer?: string; 'jwks-uri'?: string; audience?: string[]; allow?: string[]; rate?: string; 'rate-key'?: string }): {
  auth?: AuthSettings;
  ip_allowlist?: string[];
  rate_limit?: { requests: number; unit: 'second' | 'minute' | 'hour' | 'day'; key: 'client_ip' | 'api_key' } | null;
} {
  const out: ReturnType<typeof settingsBody> = {};
  const jwtGiven = flags.issuer || flags['jwks-uri'] || flags.audience?.length;
  if (flags.auth === 'jwt') {
    if (!flags.issuer || !flags['jwks-uri'] || !flags.audience?.length) throw new UsageError('--auth jwt needs --issuer, --jwks-uri and at least one --audience');
    out.auth = { mode: 'jwt', jwt: { issuer: flags.issuer, jwks_uri: flags['jwks-uri'], audiences: flags.audience } };
  } else if (jwtGiven) {
    throw new UsageError('--issuer, --jwks-uri and --audience go with --auth jwt');
  } else if (flags.auth) {
    out.auth = { mode: flags.auth as 'none' | 'apikey' };
  }
  if (flags.allow) out.ip_allowlist = flags.allow;
  if (flags.rate === 'none') out.rate_limit = null;
  else if (flags.rate) out.rate_limit = { ...parseRate(flags.rate), key: (flags['rate-key'] ?? 'client_ip') as 'client_ip' | 'api_key' };
  return out;
}
