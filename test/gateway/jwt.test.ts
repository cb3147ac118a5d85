import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfig } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeUser } from '../helpers/fixtures.js';
import { gw, sharedHost, viaHost } from './helpers.js';

// jwt endpoints against a local JWKS server: valid, wrong issuer, wrong audience, expired, not yet
// valid, unknown kid, and a key rotation at the issuer picked up on the unknown kid.
const ISSUER = 'https://issuer.example.test/';
let d: TestDaemon;
let jwks: Server;
let published: { keys: JWK[] } = { keys: [] };
let fetches = 0;
let host: string;
const keys: Record<string, { priv: CryptoKey; jwk: JWK }> = {};

async function makeKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  keys[kid] = { priv: privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

function sign(kid: string, claims: { iss?: string; aud?: string | string[]; exp?: number; nbf?: number; sub?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience(claims.aud ?? 'orders-api')
    .setSubject(claims.sub ?? 'user-1')
    .setIssuedAt(now - 5)
    .setExpirationTime(claims.exp ?? now + 300);
  if (claims.nbf) jwt.setNotBefore(claims.nbf);
  return jwt.sign(keys[kid]!.priv);
}

beforeAll(async () => {
  await Promise.all(['k1', 'k2', 'rogue'].map(makeKey));
  published = { keys: [keys.k1!.jwk] };
  jwks = createServer((req, res) => {
    fetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(published));
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  // The JWKS server is on loopback, which the egress policy refuses unless named as an exception.
  const allowed = new Set([`127.0.0.1:${(jwks.address() as AddressInfo).port}`]);
  d = await startTestDaemon({ gateway: { ...gatewayConfig({}), jwksCooldownMs: 0, egressAllow: allowed } });
  const p = makeProject(d);
  projectId = p.id;
  const admin = await makeUser(d);
  adminToken = admin.token;
  grant(d, p.id, admin.id, 'admin');
  const jwksUri = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
  const c = await d.api('POST', `${gw(p.id)}/endpoints`, {
    token: admin.token,
    body: { name: 'orders', target: { kind: 'vectordb' }, auth: { mode: 'jwt', jwt: { issuer: ISSUER, jwks_uri: jwksUri, audiences: ['orders-api', 'orders-admin'] } } },
  });
  expect(c.status, c.text).toBe(201);
  expect(c.body.auth).toEqual({ mode: 'jwt', jwt: { issuer: ISSUER, jwks_uri: jwksUri, audiences: ['orders-api', 'orders-admin'] } });
  expect((await d.api('POST', `${gw(p.id)}/endpoints/orders/publish`, { token: admin.token })).status).toBe(200);
  host = sharedHost(d, 'orders', p.short);
});
afterAll(async () => {
  await d?.close();
  jwks?.close();
});

const call = (token?: string) => viaHost(d, host, { headers: token ? { authorization: `Bearer ${token}` } : {} });

let projectId = '';
let adminToken = '';

describe('jwt', () => {
  it('a jwks_uri on one of the host\'s own services (loopback, not an exception) or the metadata address is never fetched', async () => {
    for (const [name, uri] of [
      ['own', `${d.url}/v1/healthz`],
      ['meta', 'http://169.254.169.254/latest/meta-data/'],
    ]) {
      const c = await d.api('POST', `${gw(projectId)}/endpoints`, {
        token: adminToken,
        body: { name: `guard-${name}`, target: { kind: 'vectordb' }, auth: { mode: 'jwt', jwt: { issuer: ISSUER, jwks_uri: uri, audiences: ['orders-api'] } } },
      });
      expect(c.status, c.text).toBe(201);
      expect((await d.api('POST', `${gw(projectId)}/endpoints/guard-${name}/publish`, { token: adminToken })).status).toBe(200);
      const p = (d.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(projectId) as { short: string }).short;
      const r = await viaHost(d, sharedHost(d, `guard-${name}`, p), { headers: { authorization: `Bearer ${await sign('k1')}` } });
      expect(r.status, r.text).toBe(401);
      expect(r.body.error).toMatch(/refused to fetch .*(loopback|link-local)/);
    }
  });

  it('a valid token passes (any listed audience), the key set is fetched once and cached', async () => {
    const r = await call(await sign('k1'));
    expect(r.status, r.text).toBe(200);
    expect(r.headers['x-gateway-decision']).toMatch(/caller=jwt sub user-1/);
    expect((await call(await sign('k1', { aud: ['other', 'orders-admin'] }))).status).toBe(200);
    const before = fetches;
    for (let i = 0; i < 5; i++) expect((await call(await sign('k1'))).status).toBe(200);
    expect(fetches).toBe(before);
  });

  it('refuses with 401 and a reason: none, malformed, wrong issuer, wrong audience, expired, not yet valid', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string | undefined, RegExp]> = [
      [undefined, /needs a JWT/],
      ['not.a.jwt', /malformed/],
      [await sign('k1', { iss: 'https://evil.example.test/' }), /issuer/],
      [await sign('k1', { aud: 'someone-else' }), /audience/],
      [await sign('k1', { exp: now - 120 }), /expired/],
      [await sign('k1', { nbf: now + 600 }), /not yet valid/],
    ];
    for (const [token, reason] of cases) {
      const r = await call(token);
      expect(r.status, String(reason)).toBe(401);
      expect(r.body.error).toMatch(reason);
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    // Within the clock skew (60 s) an expired token still passes.
    expect((await call(await sign('k1', { exp: now - 10 }))).status).toBe(200);
  });

  it('an unknown kid refetches the key set and is refused when it is not there', async () => {
    const before = fetches;
    const r = await call(await sign('rogue'));
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/unknown kid/);
    expect(fetches).toBeGreaterThan(before);
  });

  it('key rotation at the issuer: a token with the new kid passes after the refetch; the retired key stops', async () => {
    published = { keys: [keys.k2!.jwk] };
    expect((await call(await sign('k2'))).status).toBe(200);
    const old = await call(await sign('k1'));
    expect(old.status).toBe(401);
    expect(old.body.error).toMatch(/unknown kid/);
  });
});
