import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, makeUser, FIXTURE_PASSWORD } from '../helpers/fixtures.js';

const clock = new ManualClock(Date.parse('2026-01-10T00:00:00Z'));
let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({}, { clock });
});
afterAll(() => d.close());

const NEW_PASSWORD = 'Invited-Pass-42';
const invite = (c: Awaited<ReturnType<typeof cast>>, email: string, role?: string, token = c.admin.token) =>
  d.api('POST', `/v1/projects/${c.project.id}/invitations`, { token, body: role ? { email, role } : { email } });

describe('POST /v1/projects/{id}/invitations', () => {
  it('creates an invitation with a one-time token and accept_url; only a hash is stored', async () => {
    const c = await cast(d);
    const r = await invite(c, 'New.Person@Example.test', 'admin');
    expect(r.status).toBe(201);
    const inv = r.body.invitation;
    expect(inv).toMatchObject({ email: 'new.person@example.test', role: 'admin', state: 'open', project_id: c.project.id, invited_by: c.admin.email });
    expect(inv.token).toMatch(/^inv_[A-Za-z0-9]{40}$/);
    expect(inv.accept_url).toBe(`/invite/${inv.token}`);
    expect(Date.parse(inv.expires_at) - Date.parse(inv.created_at)).toBe(7 * 86_400_000);
    expect(r.body.note).toMatch(/shown only once/);
    expect(r.body.member).toBeUndefined();
    // The token is nowhere in the database, only its hash.
    const dump = JSON.stringify(d.db.prepare('SELECT * FROM acct_invitations').all());
    expect(dump).not.toContain(inv.token);
    expect(dump).not.toContain(inv.token.slice(4));
    // Lists never show the token again.
    const list = await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: c.member.token });
    expect(list.status).toBe(200);
    expect(list.body.invitations).toHaveLength(1);
    expect(list.body.invitations[0].token).toBeUndefined();
    expect(list.body.invitations[0].accept_url).toBeUndefined();
    expect(list.text).not.toContain(inv.token);
  });

  it('an existing account is added as a member at once: member object and note, no invitation', async () => {
    const c = await cast(d);
    const someone = await makeUser(d);
    const r = await invite(c, someone.email);
    expect(r.status).toBe(201);
    expect(r.body.invitation).toBeUndefined();
    expect(r.body.member).toMatchObject({ user_id: someone.id, email: someone.email, role: 'member', kind: 'user', external: false });
    expect(r.body.note).toMatch(/already has an account/);
    expect((await d.api('GET', `/v1/projects/${c.project.id}`, { token: someone.token })).body.your_role).toBe('member');
    expect((await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: c.admin.token })).body.invitations).toEqual([]);
    // Inviting an existing member again: 409.
    const again = await invite(c, someone.email, 'admin');
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already a member/);
  });

  it('validates email and role; unknown fields 400 naming the field', async () => {
    const c = await cast(d);
    expect((await invite(c, 'not-an-email')).body.error).toMatch(/invalid field email/);
    expect((await invite(c, 'x@example.test', 'owner')).body.error).toMatch(/invalid field role: must be one of admin, member/);
    const r = await d.api('POST', `/v1/projects/${c.project.id}/invitations`, { token: c.admin.token, body: { email: 'x@example.test', message: 'hi' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('unknown body field: message');
  });

  it('authorization: metadata admin creates and revokes; member 403; outsider 404; platform admin allowed; machine 403', async () => {
    const c = await cast(d);
    expect((await invite(c, 'a1@example.test', undefined, c.member.token)).status).toBe(403);
    const out = await invite(c, 'a2@example.test', undefined, c.outsider.token);
    expect(out.status).toBe(404);
    expect(out.body.error).toBe('project not found');
    expect((await invite(c, 'a3@example.test', undefined, c.platformAdmin.token)).status).toBe(201);
    expect((await invite(c, 'a4@example.test', undefined, c.sa.token)).status).toBe(403);
    expect((await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: c.outsider.token })).status).toBe(404);
    expect((await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: c.platformAdmin.token })).status).toBe(200);
    expect((await d.api('GET', `/v1/projects/${c.project.id}/invitations`)).status).toBe(401);
    const id = (await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: c.admin.token })).body.invitations[0].id;
    expect((await d.api('DELETE', `/v1/projects/${c.project.id}/invitations/${id}`, { token: c.member.token })).status).toBe(403);
    expect((await d.api('DELETE', `/v1/projects/${c.project.id}/invitations/${id}`, { token: c.outsider.token })).status).toBe(404);
    expect((await d.api('DELETE', `/v1/projects/${c.project.id}/invitations/${id}`, { token: c.sa.token })).status).toBe(403);
  });

  it('a second invitation for the same e-mail supersedes the open one', async () => {
    const c = await cast(d);
    const first = (await invite(c, 'twice@example.test')).body.invitation;
    const second = (await invite(c, 'twice@example.test', 'admin')).body.invitation;
    expect((await d.api('GET', `/v1/invitations/${first.token}`)).status).toBe(410);
    expect((await d.api('GET', `/v1/invitations/${second.token}`)).body.role).toBe('admin');
    const states = (await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: c.admin.token })).body.invitations.map((i: any) => i.state);
    expect(states).toEqual(['open', 'revoked']);
  });
});

describe('preview and accept', () => {
  it('GET /v1/invitations/{token} previews without a credential', async () => {
    const c = await cast(d);
    const inv = (await invite(c, 'preview@example.test', 'admin')).body.invitation;
    const r = await d.api('GET', `/v1/invitations/${inv.token}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      project_name: c.project.slug,
      project_slug: c.project.slug,
      email: 'preview@example.test',
      role: 'admin',
      expires_at: inv.expires_at,
      account_exists: false,
    });
    const bad = await d.api('GET', `/v1/invitations/inv_${'x'.repeat(40)}`);
    expect(bad.status).toBe(404);
    expect(bad.body.error).toBe('invitation link not valid');
  });

  it('accept creates an external user (no home org) with the chosen password, grants the role, 410 on reuse', async () => {
    const c = await cast(d);
    const inv = (await invite(c, 'outside@example.test', 'admin')).body.invitation;
    const missing = await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/password is required/);
    const short = await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: 'Short-1' } });
    expect(short.status).toBe(400);
    expect(short.body.error).toBe('password must be at least 12 characters');
    const weak = await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: 'alllowercaseletters' } });
    expect(weak.status).toBe(400);
    expect(weak.body.error).toMatch(/at least 3 of/);
    const r = await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: NEW_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ accepted: true, project_id: c.project.id, role: 'admin', email: 'outside@example.test' });
    expect(r.body.note).toMatch(/account created/);
    const user = d.db.prepare('SELECT * FROM acct_users WHERE email = ?').get('outside@example.test') as any;
    expect(user.org_id).toBeNull();
    expect(user.role).toBe('user');
    expect(user.must_change_password).toBe(0);
    const token = await d.login('outside@example.test', NEW_PASSWORD);
    const project = (await d.api('GET', `/v1/projects/${c.project.id}`, { token })).body;
    expect(project).toMatchObject({ your_role: 'admin', your_metadata_role: 'admin' });
    const again = await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: NEW_PASSWORD } });
    expect(again.status).toBe(410);
    expect(again.body.error).toBe('invitation already used');
    expect((await d.api('GET', `/v1/invitations/${inv.token}`)).status).toBe(410);
    const listed = (await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: c.admin.token })).body.invitations[0];
    expect(listed).toMatchObject({ state: 'accepted', accepted_at: expect.any(String) });
  });

  it('accept by an existing account grants the role and never changes its password', async () => {
    const c = await cast(d);
    const inv = (await invite(c, 'later@example.test')).body.invitation;
    // The account appears after the invitation was sent (e.g. created by an org admin).
    const someone = await makeUser(d, { email: 'later@example.test' });
    expect((await d.api('GET', `/v1/invitations/${inv.token}`)).body.account_exists).toBe(true);
    const before = (d.db.prepare('SELECT password_hash FROM acct_users WHERE id = ?').get(someone.id) as any).password_hash;
    const r = await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: 'Another-Pass-99' } });
    expect(r.status).toBe(200);
    expect(r.body.note).toMatch(/password is unchanged/);
    const after = (d.db.prepare('SELECT password_hash FROM acct_users WHERE id = ?').get(someone.id) as any).password_hash;
    expect(after).toBe(before);
    await d.login('later@example.test', FIXTURE_PASSWORD);
    expect((await d.api('POST', '/v1/auth/login', { body: { email: 'later@example.test', password: 'Another-Pass-99' } })).status).toBe(401);
    expect((await d.api('GET', `/v1/projects/${c.project.id}`, { token: someone.token })).body.your_role).toBe('member');
  });

  it('409 when the account is already a member; the invitation stays open', async () => {
    const c = await cast(d);
    const inv = (await invite(c, 'dup@example.test')).body.invitation;
    const someone = await makeUser(d, { email: 'dup@example.test' });
    await d.api('POST', `/v1/projects/${c.project.id}/invitations`, { token: c.admin.token, body: { email: someone.email } });
    const r = await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token } });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/already a member/);
  });

  it('revoked and expired invitations answer 410; expiry is derived from the clock', async () => {
    const c = await cast(d);
    const a = (await invite(c, 'revoke-me@example.test')).body.invitation;
    const rv = await d.api('DELETE', `/v1/projects/${c.project.id}/invitations/${a.id}`, { token: c.admin.token });
    expect(rv.status).toBe(200);
    expect(rv.body).toMatchObject({ revoked: a.id, invitation: { state: 'revoked', revoked_at: expect.any(String) } });
    const gone = await d.api('POST', '/v1/invitations/accept', { body: { token: a.token, password: NEW_PASSWORD } });
    expect(gone.status).toBe(410);
    expect(gone.body.error).toBe('invitation revoked');
    expect((await d.api('DELETE', `/v1/projects/${c.project.id}/invitations/${a.id}`, { token: c.admin.token })).body.note).toMatch(/already revoked/);
    expect((await d.api('DELETE', `/v1/projects/${c.project.id}/invitations/00000000-0000-4000-8000-000000000000`, { token: c.admin.token })).status).toBe(404);

    const b = (await invite(c, 'slow@example.test')).body.invitation;
    clock.advance(7 * 86_400_000 - 1000);
    expect((await d.api('GET', `/v1/invitations/${b.token}`)).status).toBe(200);
    clock.advance(2000);
    const expired = await d.api('POST', '/v1/invitations/accept', { body: { token: b.token, password: NEW_PASSWORD } });
    expect(expired.status).toBe(410);
    expect(expired.body.error).toBe('invitation expired');
    // Session tokens last 12 hours: sign in again after a week.
    const admin = await d.login(c.admin.email, FIXTURE_PASSWORD);
    const listed = (await d.api('GET', `/v1/projects/${c.project.id}/invitations`, { token: admin })).body.invitations;
    expect(listed.find((i: any) => i.id === b.id).state).toBe('expired');
    expect(d.db.prepare('SELECT 1 FROM acct_users WHERE email = ?').get('slow@example.test')).toBeUndefined();
  });

  it('accept: unknown token 404, unknown body field 400', async () => {
    const r = await d.api('POST', '/v1/invitations/accept', { body: { token: 'inv_nope', password: NEW_PASSWORD } });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('invitation link not valid');
    expect((await d.api('POST', '/v1/invitations/accept', { body: { token: 'x', name: 'me' } })).body.error).toBe('unknown body field: name');
  });

  it('every change writes an audit row in the project log', async () => {
    const c = await cast(d);
    const someone = await makeUser(d);
    await invite(c, someone.email);
    const inv = (await invite(c, 'audited@example.test')).body.invitation;
    await d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: NEW_PASSWORD } });
    const inv2 = (await invite(c, 'audited2@example.test')).body.invitation;
    await d.api('DELETE', `/v1/projects/${c.project.id}/invitations/${inv2.id}`, { token: c.admin.token });
    const log = (await d.api('GET', `/v1/projects/${c.project.id}/audit`, { token: c.member.token })).body.entries;
    expect(log.map((e: any) => e.action)).toEqual([
      'invitation.revoke',
      'invitation.create',
      'invitation.accept',
      'user.create',
      'invitation.create',
      'member.add',
    ]);
    expect(log[2]).toMatchObject({ actor: 'audited@example.test', target: 'audited@example.test', details: { role: 'member', account_created: true } });
    expect(log[5]).toMatchObject({ actor: c.admin.email, target: someone.email, details: { via: 'invitation' } });
    expect(JSON.stringify(log)).not.toContain(inv.token);
  });
});

describe('concurrency and paging', () => {
  it('two concurrent accepts of one token: one 200, one 410, one account', async () => {
    const c = await cast(d);
    const inv = (await invite(c, 'racer@example.test')).body.invitation;
    const [a, b] = await Promise.all([
      d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: NEW_PASSWORD } }),
      d.api('POST', '/v1/invitations/accept', { body: { token: inv.token, password: 'Other-Pass-123' } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 410]);
    expect(d.db.prepare('SELECT COUNT(*) AS n FROM acct_users WHERE email = ?').get('racer@example.test')).toEqual({ n: 1 });
    expect(d.db.prepare(`SELECT COUNT(*) AS n FROM acct_audit WHERE action = 'invitation.accept' AND target = ?`).get('racer@example.test')).toEqual({ n: 1 });
  });

  it('the list pages newest first without repeats while invitations are added', async () => {
    const c = await cast(d);
    for (let i = 0; i < 5; i++) await invite(c, `page${i}@example.test`);
    const path = `/v1/projects/${c.project.id}/invitations`;
    const seen: string[] = [];
    let token: string | undefined;
    let first = true;
    do {
      const r = await d.api('GET', `${path}?page_size=2${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, { token: c.admin.token });
      expect(r.status).toBe(200);
      seen.push(...r.body.invitations.map((i: any) => i.email));
      token = r.body.next_page_token;
      if (first) await invite(c, 'late@example.test');
      first = false;
    } while (token);
    expect(seen).toEqual([4, 3, 2, 1, 0].map((i) => `page${i}@example.test`));
    const other = await cast(d);
    const t = (await d.api('GET', `${path}?page_size=1`, { token: c.admin.token })).body.next_page_token;
    const foreign = await d.api('GET', `/v1/projects/${other.project.id}/invitations?page_token=${encodeURIComponent(t)}`, { token: other.admin.token });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('page_token was issued for a different list');
  });
});

describe('accept is sign-in throttled', () => {
  it('shares the per-IP sign-in window: 429 with Retry-After after the limit', async () => {
    const t = await startTestDaemon({ signIn: { perIp: 3, perAccount: 50, windowMs: 900_000 } });
    try {
      const ok = await t.api('POST', '/v1/auth/login', { body: { email: 'nobody@example.test', password: 'x' } });
      expect(ok.status).toBe(401);
      for (let i = 0; i < 2; i++) expect((await t.api('POST', '/v1/invitations/accept', { body: { token: `inv_${i}` } })).status).toBe(404);
      const r = await t.api('POST', '/v1/invitations/accept', { body: { token: 'inv_more' } });
      expect(r.status).toBe(429);
      expect(r.body.error).toMatch(/^too many sign-in attempts/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await t.api('POST', '/v1/auth/login', { body: { email: 'nobody@example.test', password: 'x' } })).status).toBe(429);
    } finally {
      await t.close();
    }
  });
});
