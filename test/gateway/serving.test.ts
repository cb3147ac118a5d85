import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { gatewayConfig } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeUser } from '../helpers/fixtures.js';
import { gw, sharedHost, viaHost } from './helpers.js';

// Serving with apikey auth (live, expired, revoked, rotated), allow lists (v4, v6, proxy trust),
// rate limits (per key, per address, no overshoot) and Host tricks, on a vectordb target (the
// project's vector API: no workload to start). Time moves by an injected clock.
const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
let d: TestDaemon;
let token: string;
let p: { id: string; short: string };
let other: { id: string; short: string };
const secrets: string[] = [];

beforeAll(async () => {
  d = await startTestDaemon({ gateway: { ...gatewayConfig({}), trustedProxies: ['127.0.0.1/32'] } }, { clock });
  p = makeProject(d);
  other = makeProject(d);
  const admin = await makeUser(d);
  grant(d, p.id, admin.id, 'admin');
  grant(d, other.id, admin.id, 'admin');
  token = admin.token;
});
afterAll(async () => d?.close());

async function endpoint(name: string, body: Record<string, unknown> = {}, project = p.id) {
  const c = await d.api('POST', `${gw(project)}/endpoints`, { token, body: { name, target: { kind: 'vectordb' }, ...body } });
  expect(c.status, c.text).toBe(201);
  return c.body;
}
async function key(name: string, body: Record<string, unknown> = {}) {
  const k = await d.api('POST', `${gw(p.id)}/endpoints/${name}/keys`, { token, body });
  expect(k.status, k.text).toBe(201);
  secrets.push(k.body.secret);
  return k.body as { key: { key_id: string }; secret: string };
}
const publish = async (name: string, project = p.id) => expect((await d.api('POST', `${gw(project)}/endpoints/${name}/publish`, { token })).status).toBe(200);

describe('reaching the target', () => {
  it('a published none endpoint forwards to the project vector API; unpublished or absent answers 404', async () => {
    await endpoint('open');
    const before = await viaHost(d, sharedHost(d, 'open', p.short));
    expect(before.status).toBe(404);
    expect(before.body).toMatchObject({ error: expect.stringMatching(/no gateway endpoint answers/), request_id: expect.stringMatching(/^req_/) });
    await publish('open');
    const r = await viaHost(d, sharedHost(d, 'open', p.short));
    expect(r.status, r.text).toBe(200);
    expect(r.body).toHaveProperty('indexes');
    expect(r.headers['x-gateway-decision']).toMatch(/endpoint=open; auth=none/);
    await d.api('POST', `${gw(p.id)}/endpoints/open/unpublish`, { token });
    expect((await viaHost(d, sharedHost(d, 'open', p.short))).status).toBe(404);
    await publish('open');
  });
});

describe('apikey', () => {
  it('accepts a live key in X-API-Key or Authorization: Bearer; refuses missing, wrong and other endpoints\' keys with 401', async () => {
    await endpoint('keyed', { auth: { mode: 'apikey' } });
    await endpoint('keyed2', { auth: { mode: 'apikey' } });
    const k = await key('keyed');
    const k2 = await key('keyed2');
    await publish('keyed');
    await publish('keyed2');
    const host = sharedHost(d, 'keyed', p.short);
    expect((await viaHost(d, host, { headers: { 'x-api-key': k.secret } })).status).toBe(200);
    expect((await viaHost(d, host, { headers: { authorization: `Bearer ${k.secret}` } })).status).toBe(200);
    const none = await viaHost(d, host);
    expect(none.status).toBe(401);
    expect(none.body.error).toMatch(/needs an API key/);
    // One character changed (never to itself: a secret may already end in x).
    expect((await viaHost(d, host, { headers: { 'x-api-key': `${k.secret.slice(0, -1)}${k.secret.endsWith('x') ? 'y' : 'x'}` } })).status).toBe(401);
    expect((await viaHost(d, host, { headers: { 'x-api-key': k2.secret } })).status).toBe(401);
  });

  it('revoked stops at once; expired follows expires_at', async () => {
    const r = await key('keyed');
    const host = sharedHost(d, 'keyed', p.short);
    expect((await viaHost(d, host, { headers: { 'x-api-key': r.secret } })).status).toBe(200);
    expect((await d.api('DELETE', `${gw(p.id)}/endpoints/keyed/keys/${r.key.key_id}`, { token })).status).toBe(204);
    const revoked = await viaHost(d, host, { headers: { 'x-api-key': r.secret } });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toMatch(/revoked/);

    const e = await key('keyed', { expires_in_days: 1 });
    expect((await viaHost(d, host, { headers: { 'x-api-key': e.secret } })).status).toBe(200);
    clock.advance(86_400_000 + 1000);
    const expired = await viaHost(d, host, { headers: { 'x-api-key': e.secret } });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatch(/expired/);
    // Sessions follow the injected clock too: sign in again after moving it a day.
    token = await reLogin();
  });

  it('rotation: the new secret works at once, the old one through the 24 h overlap, then stops', async () => {
    token = await reLogin();
    const old = await key('keyed');
    const host = sharedHost(d, 'keyed', p.short);
    const rot = await d.api('POST', `${gw(p.id)}/endpoints/keyed/keys/${old.key.key_id}/rotate-credential`, { token });
    expect(rot.status, rot.text).toBe(200);
    secrets.push(rot.body.secret);
    expect((await viaHost(d, host, { headers: { 'x-api-key': rot.body.secret } })).status).toBe(200);
    expect((await viaHost(d, host, { headers: { 'x-api-key': old.secret } })).status).toBe(200);
    clock.advance(23 * 3_600_000);
    expect((await viaHost(d, host, { headers: { 'x-api-key': old.secret } })).status).toBe(200);
    clock.advance(3_600_000 + 1000);
    const after = await viaHost(d, host, { headers: { 'x-api-key': old.secret } });
    expect(after.status).toBe(401);
    expect(after.body.error).toMatch(/rotated and its overlap has ended/);
    expect((await viaHost(d, host, { headers: { 'x-api-key': rot.body.secret } })).status).toBe(200);
    token = await reLogin();
    const keys = (await d.api('GET', `${gw(p.id)}/endpoints/keyed/keys`, { token })).body.keys;
    expect(keys.find((x: any) => x.key_id === old.key.key_id)).toMatchObject({ superseded: true, state: 'expired' });
  });
});

let adminEmail = '';
async function reLogin(): Promise<string> {
  if (!adminEmail) adminEmail = (d.db.prepare(`SELECT u.email FROM acct_users u JOIN acct_project_members m ON m.user_id = u.id WHERE m.project_id = ? AND m.role = 'admin'`).get(p.id) as { email: string }).email;
  return d.login(adminEmail, 'Fixture-Password-1');
}

describe('allow list', () => {
  it('v4 and v6 lists against the client address; X-Forwarded-For is believed only from the trusted proxy', async () => {
    token = await reLogin();
    await endpoint('v4only', { ip_allowlist: ['127.0.0.1/32'] });
    await endpoint('v6only', { ip_allowlist: ['2001:db8::/32'] });
    await publish('v4only');
    await publish('v6only');
    const v4 = sharedHost(d, 'v4only', p.short);
    const v6 = sharedHost(d, 'v6only', p.short);
    expect((await viaHost(d, v4)).status).toBe(200);
    const fromOther = await viaHost(d, v4, { localAddress: '127.0.0.2' });
    expect(fromOther.status).toBe(403);
    expect(fromOther.body.error).toMatch(/127\.0\.0\.2 is not in the endpoint's allow list/);
    // 127.0.0.1 is the trusted proxy: the address it forwards for is the client.
    expect((await viaHost(d, v6, { headers: { 'x-forwarded-for': '2001:db8::5' } })).status).toBe(200);
    expect((await viaHost(d, v6, { headers: { 'x-forwarded-for': '2001:db8::5, 127.0.0.1' } })).status).toBe(200);
    expect((await viaHost(d, v6, { headers: { 'x-forwarded-for': '2001:db9::5' } })).status).toBe(403);
    // Left of the first untrusted hop is what the client wrote: not believed.
    expect((await viaHost(d, v6, { headers: { 'x-forwarded-for': '2001:db8::5, 198.51.100.7' } })).status).toBe(403);
    // 127.0.0.2 is not a trusted proxy: its forged header changes nothing.
    expect((await viaHost(d, v6, { localAddress: '127.0.0.2', headers: { 'x-forwarded-for': '2001:db8::5' } })).status).toBe(403);
    expect((await viaHost(d, v4, { headers: { 'x-forwarded-for': '::ffff:127.0.0.1' } })).status).toBe(200);
  });
});

describe('Host tricks and other projects', () => {
  it('case, trailing dot and any port reach the same endpoint; another project\'s or an unpublished one never', async () => {
    const host = `open-${p.short}.gw.localhost`;
    for (const h of [host, host.toUpperCase(), `${host}.`, `${host}:1`, `${host}.:${d.port}`, `OPEN-${p.short.toUpperCase()}.GW.LOCALHOST.`]) {
      expect((await viaHost(d, h)).status, h).toBe(200);
    }
    await endpoint('hidden', {}, other.id);
    for (const h of [`hidden-${other.short}.gw.localhost`, `hidden-${p.short}.gw.localhost`, `open-${other.short}.gw.localhost`, `open-${p.short}.gw.localhost.evil.test`, `x.open-${p.short}.gw.localhost`, `open-${p.short}..gw.localhost`, `open-${p.short}.gw.localhost:abc`]) {
      const r = await viaHost(d, h).catch(() => ({ status: 400 }));
      expect([400, 404], h).toContain(r.status);
    }
    // A path that tries to climb out of the project's API prefix is refused before forwarding.
    expect((await viaHost(d, `${host}`, { path: '/..%2f..%2fv1%2fprojects' })).status).toBe(400);
  });

  it('an endpoint cannot target a workload of another project (404), by name or by re-targeting', async () => {
    const made = await d.api('POST', `${gw(p.id)}/endpoints`, { token, body: { name: 'steal', target: { kind: 'function', name: 'theirs' } } });
    expect(made.status).toBe(404);
    const re = await d.api('PATCH', `${gw(p.id)}/endpoints/open`, { token, body: { target: { kind: 'serverless', name: 'theirs' } } });
    expect(re.status).toBe(404);
  });
});

describe('rate limits', () => {
  it('per address: 429 with Retry-After and RateLimit headers past the limit, again in the next window', async () => {
    await endpoint('limited', { rate_limit: { requests: 3, unit: 'minute', key: 'client_ip' } });
    await publish('limited');
    const host = sharedHost(d, 'limited', p.short);
    clock.advance(60_000 - (clock.now() % 60_000)); // start of a minute
    for (let i = 0; i < 3; i++) {
      const ok = await viaHost(d, host);
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    clock.advance(20_000);
    const over = await viaHost(d, host);
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('40');
    expect(over.headers['ratelimit-limit']).toBe('3');
    expect(over.body.error).toMatch(/3 per minute per client address/);
    // Another address has its own budget.
    expect((await viaHost(d, host, { localAddress: '127.0.0.3' })).status).toBe(200);
    clock.advance(40_000);
    expect((await viaHost(d, host)).status).toBe(200);
  });

  it('per key: each key has its own budget', async () => {
    token = await reLogin();
    await endpoint('perkey', { auth: { mode: 'apikey' }, rate_limit: { requests: 2, unit: 'hour', key: 'api_key' } });
    const a = await key('perkey');
    const b = await key('perkey');
    await publish('perkey');
    const host = sharedHost(d, 'perkey', p.short);
    clock.advance(3_600_000 - (clock.now() % 3_600_000));
    const statuses = async (s: string) => {
      const out: number[] = [];
      for (let i = 0; i < 3; i++) out.push((await viaHost(d, host, { headers: { 'x-api-key': s } })).status);
      return out;
    };
    expect(await statuses(a.secret)).toEqual([200, 200, 429]);
    expect(await statuses(b.secret)).toEqual([200, 200, 429]);
    const last = await viaHost(d, host, { headers: { 'x-api-key': a.secret } });
    expect(Number(last.headers['retry-after'])).toBe(3600);
  });

  it('holds under 200 concurrent requests: exactly the limit passes', async () => {
    await endpoint('flood', { rate_limit: { requests: 50, unit: 'day', key: 'client_ip' } });
    await publish('flood');
    const host = sharedHost(d, 'flood', p.short);
    const results = await Promise.all(Array.from({ length: 200 }, () => viaHost(d, host)));
    const counts = results.reduce<Record<number, number>>((m, r) => ((m[r.status] = (m[r.status] ?? 0) + 1), m), {});
    expect(counts).toEqual({ 200: 50, 429: 150 });
  });
});

describe('secrets at rest', () => {
  it('no key secret appears in clear anywhere in the state directory', () => {
    expect(secrets.length).toBeGreaterThan(5);
    d.db.pragma('wal_checkpoint(TRUNCATE)');
    for (const s of secrets) {
      const hits = execFileSync('sh', ['-c', `grep -rlaF -- "$0" "$1" || true`, s, d.home]).toString().trim();
      expect(hits, `secret found in ${hits}`).toBe('');
      // The random half alone must not be there either.
      const tail = s.split('_').pop()!;
      expect(execFileSync('sh', ['-c', `grep -rlaF -- "$0" "$1" || true`, tail, d.home]).toString().trim()).toBe('');
    }
  });
});
