import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeUser } from '../helpers/fixtures.js';
import { gw } from './helpers.js';

// Every route of spec 2 §4.5 with its statuses and listed errors, roles and the 404-not-403 rule.
let d: TestDaemon;
let admin: { token: string };
let member: { token: string };
let outsider: { token: string };
let p: { id: string; short: string };
let other: { id: string; short: string };

beforeAll(async () => {
  d = await startTestDaemon();
  p = makeProject(d);
  other = makeProject(d);
  admin = await makeUser(d);
  member = await makeUser(d);
  outsider = await makeUser(d);
  grant(d, p.id, (admin as any).id, 'admin');
  grant(d, p.id, (member as any).id, 'member');
  grant(d, other.id, (outsider as any).id, 'admin');
});
afterAll(async () => d?.close());

const create = (body: unknown, token = admin.token, project = p.id) => d.api('POST', `${gw(project)}/endpoints`, { token, body });

describe('endpoints', () => {
  it('creates an unpublished endpoint with its reserved shared address (201)', async () => {
    const r = await create({ name: 'web', target: { kind: 'vectordb' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      name: 'web',
      resource_path: `projects/${p.short}/gateway/endpoints/web`,
      project_id: p.short,
      hostname: `web-${p.short}.gw.localhost`,
      url: `http://web-${p.short}.gw.localhost:${d.port}`,
      domain_kind: 'shared',
      published: false,
      state: 'unpublished',
      target: { kind: 'vectordb' },
      auth: { mode: 'none' },
      ip_allowlist: [],
    });
    expect(r.body.rate_limit).toBeUndefined();
  });

  it('refuses what §4.5 lists with 400, and a taken name with 409', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ target: { kind: 'vectordb' } }, /name/],
      [{ name: 'a1', target: { kind: 'mainframe' } }, /unknown target\.kind/],
      [{ name: 'a2', target: { kind: 'vectordb' }, domain: { kind: 'custom', hostname: 'api.unclaimed.test' } }, /unclaimed custom hostname/],
      [{ name: 'a3', target: { kind: 'vectordb' }, auth: { mode: 'jwt', jwt: { issuer: 'https://i', jwks_uri: 'http://127.0.0.1:1/jwks', audiences: [] } } }, /jwt without audience/],
      [{ name: 'a4', target: { kind: 'vectordb' }, rate_limit: { requests: 5, unit: 'minute' } }, /missing key/],
      [{ name: 'a5', target: { kind: 'vectordb' }, ip_allowlist: ['10.0.0.0/33'] }, /not an IPv4 or IPv6 CIDR/],
      [{ name: 'a6', target: { kind: 'vectordb' }, colour: 'blue' }, /colour/],
      [{ name: 'Bad_Name', target: { kind: 'vectordb' } }, /lowercase/],
      [{ name: 'a7', target: { kind: 'agent' } }, /target\.name is required/],
    ];
    for (const [body, msg] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatch(msg);
      expect(r.body.request_id).toMatch(/^req_/);
    }
    const dup = await create({ name: 'web', target: { kind: 'pubsub' } });
    expect(dup.status).toBe(409);
  });

  it('a target naming a workload that is not in this project is 404', async () => {
    const r = await create({ name: 'ghost', target: { kind: 'function', name: 'nope' } });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatch(/not found in this project/);
  });

  it('lists with paging, gets with keys and domain, patches keeping omitted fields', async () => {
    for (const n of ['b1', 'b2', 'b3']) expect((await create({ name: n, target: { kind: 'pubsub' } })).status).toBe(201);
    const page1 = await d.api('GET', `${gw(p.id)}/endpoints?page_size=2`, { token: member.token });
    expect(page1.status).toBe(200);
    expect(page1.body.endpoints.map((e: any) => e.name)).toEqual(['b1', 'b2']);
    const page2 = await d.api('GET', `${gw(p.id)}/endpoints?page_size=2&page_token=${page1.body.next_page_token}`, { token: member.token });
    expect(page2.body.endpoints.map((e: any) => e.name)).toEqual(['b3', 'web']);
    expect(page2.body.next_page_token).toBeUndefined();

    const one = await d.api('GET', `${gw(p.id)}/endpoints/web`, { token: member.token });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ name: 'web', keys: [], domain: null });

    const patched = await d.api('PATCH', `${gw(p.id)}/endpoints/web`, { token: admin.token, body: { ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'], rate_limit: { requests: 10, unit: 'second', key: 'client_ip' } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ ip_allowlist: ['10.0.0.0/8', '2001:db8:0:0:0:0:0:0/32'], rate_limit: { requests: 10, unit: 'second', key: 'client_ip' }, target: { kind: 'vectordb' }, auth: { mode: 'none' } });
    const keyLimitWithoutKeys = await d.api('PATCH', `${gw(p.id)}/endpoints/web`, { token: admin.token, body: { rate_limit: { requests: 1, unit: 'day', key: 'api_key' } } });
    expect(keyLimitWithoutKeys.status).toBe(400);
    const cleared = await d.api('PATCH', `${gw(p.id)}/endpoints/web`, { token: admin.token, body: { rate_limit: null } });
    expect(cleared.body.rate_limit).toBeUndefined();
    expect(cleared.body.ip_allowlist).toHaveLength(2);
  });

  it('publish and unpublish; an apikey endpoint with no key cannot be published (400)', async () => {
    expect((await create({ name: 'keyed', target: { kind: 'pubsub' }, auth: { mode: 'apikey' } })).status).toBe(201);
    const refused = await d.api('POST', `${gw(p.id)}/endpoints/keyed/publish`, { token: admin.token });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/no live key/);
    const k = await d.api('POST', `${gw(p.id)}/endpoints/keyed/keys`, { token: admin.token, body: { note: 'ci' } });
    expect(k.status).toBe(201);
    const pub = await d.api('POST', `${gw(p.id)}/endpoints/keyed/publish`, { token: admin.token });
    expect(pub.status).toBe(200);
    expect(pub.body).toMatchObject({ published: true, state: 'ready' });
    const unpub = await d.api('POST', `${gw(p.id)}/endpoints/keyed/unpublish`, { token: admin.token });
    expect(unpub.body).toMatchObject({ published: false, state: 'unpublished', hostname: `keyed-${p.short}.gw.localhost` });
  });

  it('keys: 201 with the secret once, metadata on reads, rotate 200, revoke 204', async () => {
    const k = await d.api('POST', `${gw(p.id)}/endpoints/web/keys`, { token: admin.token, body: { note: 'mobile', expires_in_days: 30 } });
    expect(k.status).toBe(201);
    expect(k.body.secret).toMatch(/^gk_secret_/);
    expect(k.body).toMatchObject({ note: 'mobile', key: { note: 'mobile', state: 'live', superseded: false } });
    expect(k.body.key.expires_at).toBeTruthy();
    const keyId = k.body.key.key_id;
    const listed = await d.api('GET', `${gw(p.id)}/endpoints/web`, { token: member.token });
    expect(JSON.stringify(listed.body)).not.toContain(k.body.secret);
    expect(listed.body.keys).toHaveLength(1);
    const rot = await d.api('POST', `${gw(p.id)}/endpoints/web/keys/${keyId}/rotate-credential`, { token: admin.token });
    expect(rot.status).toBe(200);
    expect(rot.body.secret).toMatch(/^gk_secret_/);
    expect(rot.body.key.key_id).not.toBe(keyId);
    const keys = (await d.api('GET', `${gw(p.id)}/endpoints/web/keys`, { token: member.token })).body.keys;
    expect(keys.find((x: any) => x.key_id === keyId)).toMatchObject({ superseded: true, state: 'live' });
    expect((await d.api('POST', `${gw(p.id)}/endpoints/web/keys/${keyId}/rotate-credential`, { token: admin.token })).status).toBe(409);
    expect((await d.api('DELETE', `${gw(p.id)}/endpoints/web/keys/${rot.body.key.key_id}`, { token: admin.token })).status).toBe(204);
    expect((await d.api('DELETE', `${gw(p.id)}/endpoints/web/keys/${rot.body.key.key_id}`, { token: admin.token })).status).toBe(404);
    expect((await d.api('DELETE', `${gw(p.id)}/endpoints/web/keys/nokey`, { token: admin.token })).status).toBe(404);
    const after = (await d.api('GET', `${gw(p.id)}/endpoints/web/keys`, { token: member.token })).body.keys;
    expect(after.find((x: any) => x.key_id === rot.body.key.key_id).state).toBe('revoked');
  });

  it('domains: claim 201 with its CNAME, 409 when claimed by anyone, list, release 204', async () => {
    const c = await d.api('POST', `${gw(p.id)}/domains`, { token: admin.token, body: { hostname: 'API.Example.test.', note: 'prod' } });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toEqual({ hostname: 'api.example.test', verified: false, record: { type: 'CNAME', name: 'api.example.test', value: `${p.short}.gw.localhost` }, note: 'prod', created_at: expect.any(String) });
    expect((await d.api('POST', `${gw(p.id)}/domains`, { token: admin.token, body: { hostname: 'api.example.test' } })).status).toBe(409);
    expect((await d.api('POST', `${gw(other.id)}/domains`, { token: outsider.token, body: { hostname: 'api.example.test' } })).status).toBe(409);
    expect((await d.api('POST', `${gw(p.id)}/domains`, { token: admin.token, body: { hostname: 'not a host' } })).status).toBe(400);
    const list = await d.api('GET', `${gw(p.id)}/domains`, { token: member.token });
    expect(list.body.domains.map((x: any) => x.hostname)).toEqual(['api.example.test']);
    const onCustom = await create({ name: 'custom', target: { kind: 'pubsub' }, domain: { kind: 'custom', hostname: 'api.example.test' } });
    expect(onCustom.status, onCustom.text).toBe(201);
    expect(onCustom.body).toMatchObject({ hostname: 'api.example.test', domain_kind: 'custom' });
    const pub = await d.api('POST', `${gw(p.id)}/endpoints/custom/publish`, { token: admin.token });
    expect(pub.body.state).toBe('pending_verification');
    const got = await d.api('GET', `${gw(p.id)}/endpoints/custom`, { token: member.token });
    expect(got.body.domain).toMatchObject({ hostname: 'api.example.test', verified: false });
    const refused = await d.api('DELETE', `${gw(p.id)}/domains/api.example.test`, { token: admin.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/published endpoint custom/);
    await d.api('POST', `${gw(p.id)}/endpoints/custom/unpublish`, { token: admin.token });
    expect((await d.api('DELETE', `${gw(p.id)}/domains/api.example.test`, { token: admin.token })).status).toBe(204);
    expect((await d.api('GET', `${gw(p.id)}/endpoints/custom`, { token: member.token })).body).toMatchObject({ domain_kind: 'shared', domain: null });
    expect((await d.api('DELETE', `${gw(p.id)}/domains/api.example.test`, { token: admin.token })).status).toBe(404);
  });

  it('delete is 204, releases the address (re-creatable), and a second delete is a real 404', async () => {
    expect((await d.api('DELETE', `${gw(p.id)}/endpoints/b3`, { token: admin.token })).status).toBe(204);
    expect((await d.api('DELETE', `${gw(p.id)}/endpoints/b3`, { token: admin.token })).status).toBe(404);
    expect((await d.api('GET', `${gw(p.id)}/endpoints/b3`, { token: member.token })).status).toBe(404);
    expect((await create({ name: 'b3', target: { kind: 'pubsub' } })).status).toBe(201);
  });
});

describe('roles', () => {
  it('a member reads but every state change is 403', async () => {
    const m = member.token;
    const calls: Array<[string, string, unknown?]> = [
      ['POST', `${gw(p.id)}/endpoints`, { name: 'mine', target: { kind: 'pubsub' } }],
      ['PATCH', `${gw(p.id)}/endpoints/web`, { ip_allowlist: [] }],
      ['DELETE', `${gw(p.id)}/endpoints/web`],
      ['POST', `${gw(p.id)}/endpoints/web/publish`],
      ['POST', `${gw(p.id)}/endpoints/web/unpublish`],
      ['POST', `${gw(p.id)}/endpoints/web/keys`, {}],
      ['POST', `${gw(p.id)}/domains`, { hostname: 'm.example.test' }],
      ['DELETE', `${gw(p.id)}/domains/x.example.test`],
    ];
    for (const [method, path, body] of calls) expect((await d.api(method, path, { token: m, body })).status, `${method} ${path}`).toBe(403);
    expect((await d.api('GET', `${gw(p.id)}/endpoints`, { token: m })).status).toBe(200);
    expect((await d.api('GET', `${gw(p.id)}/domains`, { token: m })).status).toBe(200);
  });

  it('an outsider (admin elsewhere) gets 404 on every route, reads included', async () => {
    const o = outsider.token;
    for (const [method, path] of [
      ['GET', `${gw(p.id)}/endpoints`],
      ['GET', `${gw(p.id)}/endpoints/web`],
      ['POST', `${gw(p.id)}/endpoints/web/publish`],
      ['DELETE', `${gw(p.id)}/endpoints/web`],
      ['GET', `${gw(p.id)}/domains`],
    ] as const) {
      expect((await d.api(method, path, { token: o })).status, `${method} ${path}`).toBe(404);
    }
    expect((await d.api('GET', `${gw(p.id)}/endpoints`)).status).toBe(401);
  });
});
