import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { FIXTURE_PASSWORD, cast, grant, makeProject, makeUser } from '../helpers/fixtures.js';

const clock = new ManualClock(Date.parse('2026-05-01T08:00:00Z'));
let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({}, { clock });
});
afterAll(() => d.close());

const change = (token: string, current_password: string, new_password: string) =>
  d.api('POST', '/v1/auth/change-password', { token, body: { current_password, new_password } });

describe('POST /v1/auth/change-password', () => {
  it('rejects a wrong current password (401), short (400), unchanged (400) and weak (400) passwords', async () => {
    const u = await makeUser(d);
    const wrong = await change(u.token, 'Not-My-Password-1', 'Brand-New-Pass-1');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('current password incorrect');
    const short = await change(u.token, FIXTURE_PASSWORD, 'Short-1a');
    expect(short.status).toBe(400);
    expect(short.body.error).toBe('password must be at least 12 characters');
    const same = await change(u.token, FIXTURE_PASSWORD, FIXTURE_PASSWORD);
    expect(same.status).toBe(400);
    expect(same.body.error).toMatch(/must differ/);
    for (const weak of ['lowercaseonly-', 'ALLUPPERCASE12', 'abcdefghijkl12']) {
      const r = await change(u.token, FIXTURE_PASSWORD, weak);
      expect(r.status, weak).toBe(400);
      expect(r.body.error).toMatch(/at least 3 of/);
    }
    // Nothing changed: the old password still signs in.
    await d.login(u.email, FIXTURE_PASSWORD);
  });

  it('returns the login shape with a fresh token; the new password signs in and the old one no longer does', async () => {
    const u = await makeUser(d);
    clock.advance(1000);
    const r = await change(u.token, FIXTURE_PASSWORD, 'Changed-Pass-77');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['email', 'expires_at', 'must_change_password', 'refresh_expires_at', 'refresh_token', 'role', 'token']);
    expect(r.body).toMatchObject({ email: u.email, role: 'user', must_change_password: false });
    expect(r.body.token).not.toBe(u.token);
    expect(r.body.expires_at).toBe(Math.floor(clock.now() / 1000) + 12 * 3600);
    expect((await d.api('GET', '/v1/auth/me', { token: r.body.token })).body.email).toBe(u.email);
    expect((await d.api('POST', '/v1/auth/login', { body: { email: u.email, password: FIXTURE_PASSWORD } })).status).toBe(401);
    await d.login(u.email, 'Changed-Pass-77');
    const audit = d.db.prepare(`SELECT actor FROM acct_audit WHERE action = 'user.change_password' AND target = ?`).all(u.email);
    expect(audit).toHaveLength(1);
  });

  it('unknown body fields and missing fields are 400', async () => {
    const u = await makeUser(d);
    expect((await d.api('POST', '/v1/auth/change-password', { token: u.token, body: { current_password: 'x' } })).body.error).toBe(
      'missing required field: new_password',
    );
    expect(
      (await d.api('POST', '/v1/auth/change-password', { token: u.token, body: { current_password: 'x', new_password: 'y', confirm: 'y' } })).body.error,
    ).toBe('unknown body field: confirm');
  });
});

describe('first-login gate', () => {
  it('403 on management routes until the password is changed; me and change-password still work', async () => {
    const project = makeProject(d);
    const u = await makeUser(d, { mustChangePassword: true });
    grant(d, project.id, u.id, 'admin');
    const me = await d.api('GET', '/v1/auth/me', { token: u.token });
    expect(me.status).toBe(200);
    expect(me.body.must_change_password).toBe(true);
    const gated: Array<[string, string, unknown?]> = [
      ['GET', '/v1/projects'],
      ['GET', `/v1/projects/${project.id}`],
      ['GET', '/v1/users/me/keys'],
      ['POST', '/v1/users/me/keys', { display_name: 'x' }],
      ['GET', `/v1/projects/${project.id}/audit`],
      ['GET', `/v1/projects/${project.id}/service-accounts`],
      ['POST', `/v1/projects/${project.id}/invitations`, { email: 'x@example.test' }],
    ];
    for (const [m, p, body] of gated) {
      const r = await d.api(m, p, { token: u.token, body });
      expect(r.status, `${m} ${p}`).toBe(403);
      expect(r.body.error).toMatch(/^password change required/);
    }
    const changed = await change(u.token, FIXTURE_PASSWORD, 'First-Login-Done-1');
    expect(changed.status).toBe(200);
    expect(changed.body.must_change_password).toBe(false);
    for (const [m, p, body] of gated) {
      expect((await d.api(m, p, { token: changed.body.token, body })).status, `${m} ${p}`).toBeLessThan(300);
    }
    // The gate is live: the old session token works too now (authorization re-reads the flag).
    expect((await d.api('GET', '/v1/projects', { token: u.token })).status).toBe(200);
  });
});

describe('session tokens', () => {
  it('expire after 12 hours and are then treated as no credential (401)', async () => {
    const u = await makeUser(d);
    clock.advance(12 * 3600_000 - 1000);
    expect((await d.api('GET', '/v1/auth/me', { token: u.token })).status).toBe(200);
    clock.advance(1000);
    const r = await d.api('GET', '/v1/auth/me', { token: u.token });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/^this is a management endpoint/);
  });

  it('roles are re-read on every request: a removed grant takes effect at once', async () => {
    const c = await cast(d);
    expect((await d.api('GET', `/v1/projects/${c.project.id}`, { token: c.member.token })).status).toBe(200);
    d.db.prepare('DELETE FROM acct_project_members WHERE user_id = ?').run(c.member.id);
    expect((await d.api('GET', `/v1/projects/${c.project.id}`, { token: c.member.token })).status).toBe(404);
  });
});
