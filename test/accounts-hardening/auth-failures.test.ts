import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { FIXTURE_PASSWORD, makeProject, makeUser } from '../helpers/fixtures.js';
import { fromIp } from '../auth/from-ip.js';

/**
 * Issue 17 §3: change-password counts against the sign-in throttle, and every failed sign-in or
 * password change is recorded in the platform-scope audit log (GET /v1/audit).
 */
let d: TestDaemon;
let admin: string;
beforeAll(async () => {
  // The spec's limits (spec 1 §5): 10 per IP and 50 per account per 15 minutes.
  d = await startTestDaemon({ signIn: { perIp: 10, perAccount: 50, windowMs: 15 * 60_000 } });
  admin = await d.adminToken();
});
afterAll(() => d?.close());

const changePassword = (ip: string, token: string, current: string) =>
  fromIp(d.url, ip, 'POST', '/v1/auth/change-password', { token, body: { current_password: current, new_password: 'Brand-New-Password-9' } });

const platformAudit = async (query: string, token = admin) => {
  const r = await d.api('GET', `/v1/audit?${query}`, { token });
  expect(r.status, r.text).toBe(200);
  return r;
};

describe('change-password is throttled like sign-in', () => {
  it('per address: ten wrong current passwords, then 429 with Retry-After, even for the right one', async () => {
    const u = await makeUser(d);
    for (let i = 0; i < 10; i++) {
      const r = await changePassword('127.0.0.21', u.token, `Wrong-Guess-${i}xx`);
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('current password incorrect');
    }
    const limited = await changePassword('127.0.0.21', u.token, `Wrong-Guess-10xx`);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatch(/^too many sign-in attempts/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const right = await changePassword('127.0.0.21', u.token, FIXTURE_PASSWORD);
    expect(right.status).toBe(429);
    // The password did not change: signing in with the old one works from another address.
    expect((await fromIp(d.url, '127.0.0.22', 'POST', '/v1/auth/login', { body: { email: u.email, password: FIXTURE_PASSWORD } })).status).toBe(200);
  });

  it('per account: 50 attempts from many addresses, then 429 for that account only', async () => {
    const u = await makeUser(d); // its sign-in was attempt 1
    let n = 1;
    for (let ip = 30; n < 50; ip++) {
      for (let i = 0; i < 9 && n < 50; i++, n++) expect((await changePassword(`127.0.1.${ip}`, u.token, 'Wrong-Guess-abc1')).status).toBe(401);
    }
    const limited = await changePassword('127.0.2.1', u.token, FIXTURE_PASSWORD);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    // Another account from the same fresh address is untouched.
    const other = await makeUser(d);
    expect((await changePassword('127.0.2.2', other.token, 'Wrong-Guess-abc1')).status).toBe(401);
  });
});

describe('failed sign-ins and password changes are audited (GET /v1/audit)', () => {
  it('lists auth.login_failed with the e-mail tried and the source address, never the password', async () => {
    const u = await makeUser(d);
    const secretGuess = 'Not-The-Password-7781';
    expect((await fromIp(d.url, '127.0.0.41', 'POST', '/v1/auth/login', { body: { email: u.email, password: secretGuess } })).status).toBe(401);
    expect((await fromIp(d.url, '127.0.0.41', 'POST', '/v1/auth/login', { body: { email: 'Nobody@Example.test', password: secretGuess } })).status).toBe(401);
    const r = await platformAudit('action=auth.login_failed&page_size=200');
    expect(r.text).not.toContain(secretGuess);
    expect(r.body.entries).toContainEqual(
      expect.objectContaining({ action: 'auth.login_failed', target: u.email, details: expect.objectContaining({ email: u.email, source_address: '127.0.0.41' }) }),
    );
    expect(r.body.entries).toContainEqual(
      expect.objectContaining({ action: 'auth.login_failed', details: expect.objectContaining({ email: 'nobody@example.test', source_address: '127.0.0.41' }) }),
    );
    expect(r.body.entries.every((e: any) => e.action === 'auth.login_failed' && e.request_id)).toBe(true);
  });

  it('lists auth.password_change_failed', async () => {
    const u = await makeUser(d);
    expect((await changePassword('127.0.0.42', u.token, 'Wrong-Guess-zz99')).status).toBe(401);
    const r = await platformAudit(`action=auth.password_change_failed&actor=${encodeURIComponent(u.email)}`);
    expect(r.body.entries).toEqual([
      expect.objectContaining({ actor: u.email, action: 'auth.password_change_failed', details: expect.objectContaining({ source_address: '127.0.0.42' }) }),
    ]);
    expect(r.text).not.toContain('Wrong-Guess-zz99');
  });

  it('holds the platform-scope events (roles, resets, deletions, org membership, personal keys), not project rows', async () => {
    const u = await makeUser(d);
    expect((await d.api('PATCH', `/v1/users/${u.email}`, { token: admin, body: { role: 'admin' } })).status).toBe(200);
    expect((await d.api('PATCH', `/v1/users/${u.email}`, { token: admin, body: { role: 'user' } })).status).toBe(200);
    const key = await d.api('POST', '/v1/users/me/keys', { token: u.token, body: { display_name: 'laptop' } });
    expect(key.status, key.text).toBe(201);
    expect((await d.api('POST', `/v1/users/${u.email}/reset-password`, { token: admin })).status).toBe(200);
    const org = await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'audited' } });
    expect((await d.api('POST', `/v1/orgs/${org.body.id}/members`, { token: admin, body: { email: u.email, role: 'member' } })).status).toBe(201);
    const p = makeProject(d);
    expect((await d.api('POST', `/v1/projects/${p.id}/members`, { token: admin, body: { email: u.email, role: 'member' } })).status).toBe(201);
    expect((await d.api('DELETE', `/v1/projects/${p.id}/members/${u.id}`, { token: admin })).status).toBe(200);
    expect((await d.api('DELETE', `/v1/users/${u.email}`, { token: admin })).status).toBe(200);
    const rows = (await platformAudit('page_size=200')).body.entries.filter((e: any) => e.target === u.email || e.actor === u.email);
    const actions = rows.map((e: any) => e.action);
    for (const a of ['user.update_role', 'user.reset_password', 'key.create', 'org.member.add', 'user.delete']) expect(actions).toContain(a);
    // Project rows stay in the project's log.
    expect(actions).not.toContain('member.add');
  });

  it('pages with an anchored token bound to its filters', async () => {
    for (let i = 0; i < 3; i++) await fromIp(d.url, '127.0.0.43', 'POST', '/v1/auth/login', { body: { email: `pager-${i}@example.test`, password: 'x' } });
    const first = await platformAudit('action=auth&page_size=2');
    expect(first.body.entries).toHaveLength(2);
    expect(first.body.entries.every((e: any) => e.action.startsWith('auth.'))).toBe(true);
    const token = first.body.next_page_token as string;
    expect(token).toBeTruthy();
    const second = await platformAudit(`action=auth&page_size=2&page_token=${encodeURIComponent(token)}`);
    const ids = new Set([...first.body.entries, ...second.body.entries].map((e: any) => e.id));
    expect(ids.size).toBe(first.body.entries.length + second.body.entries.length);
    const otherFilter = await d.api('GET', `/v1/audit?action=user&page_token=${encodeURIComponent(token)}`, { token: admin });
    expect(otherFilter.status).toBe(400);
  });

  it('is for platform admins only; a project member or service account gets 403', async () => {
    const u = await makeUser(d);
    const r = await d.api('GET', '/v1/audit', { token: u.token });
    expect(r.status).toBe(403);
    expect((await d.api('GET', '/v1/audit')).status).toBe(401);
  });

  it('is in the OpenAPI document with its filters', async () => {
    const doc = (await d.api('GET', '/v1/openapi.json')).body;
    const op = doc.paths['/v1/audit'].get;
    expect(op.operationId).toBe('audit.platform');
    expect(op.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['action', 'actor', 'page_size', 'page_token']));
    const project = doc.paths['/v1/projects/{projectID}/audit'].get;
    expect(project.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['action', 'actor']));
  });
});
