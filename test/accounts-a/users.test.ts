import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, FIXTURE_PASSWORD, makeUser, grant } from '../helpers/fixtures.js';
import { passwordProblem } from '../../src/daemon/services/auth/passwords.js';
import { removeUser, updateUser } from '../../src/daemon/services/accounts/users.js';

let d: TestDaemon;
let admin: string;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.adminToken();
  c = await cast(d);
});
afterAll(() => d.close());

const audit = (action: string, target: string) =>
  d.db.prepare('SELECT * FROM acct_audit WHERE action = ? AND target = ?').all(action, target) as { actor: string; details: string }[];
const orgId = () => (d.db.prepare(`SELECT id FROM acct_orgs WHERE slug = 'default'`).get() as { id: string }).id;

describe('POST /v1/users', () => {
  it('creates a user with a generated temporary password that satisfies the rule and must be changed', async () => {
    const r = await d.api('POST', '/v1/users', { token: admin, body: { email: ' New.User@Example.test ' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.user).toMatchObject({
      email: 'new.user@example.test',
      role: 'user',
      must_change_password: true,
      org_id: orgId(),
      external: false,
      projects: [],
      agents: [],
      agent_count: 0,
    });
    expect(r.body.user.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.note).toMatch(/temporary password/);
    expect(passwordProblem(r.body.temporary_password)).toBeUndefined();
    const login = await d.api('POST', '/v1/auth/login', { body: { email: 'new.user@example.test', password: r.body.temporary_password } });
    expect(login.body.must_change_password).toBe(true);
    // First-login gate applies to the new account.
    expect((await d.api('GET', '/v1/projects', { token: login.body.token })).status).toBe(403);
    expect(audit('user.create', 'new.user@example.test')).toHaveLength(1);
  });

  it('with a given password returns no temporary_password and still requires a change', async () => {
    const r = await d.api('POST', '/v1/users', { token: admin, body: { email: 'given@example.test', password: 'Given-Password-9', role: 'admin' } });
    expect(r.status).toBe(201);
    expect(r.body.temporary_password).toBeUndefined();
    expect(r.body.user).toMatchObject({ role: 'admin', must_change_password: true });
  });

  it('409 when the account exists, pointing at membership instead', async () => {
    const r = await d.api('POST', '/v1/users', { token: admin, body: { email: ADMIN_EMAIL } });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/already exists: add the existing account as a project member instead/);
  });

  it('400 for a bad email, weak password, bad role, bad org_id and unknown fields', async () => {
    const cases: [unknown, RegExp][] = [
      [{ email: 'not-an-email' }, /email/],
      [{ email: 'weak@example.test', password: 'short' }, /at least 12 characters/],
      [{ email: 'weak@example.test', password: 'alllowercaseletters' }, /at least 3 of/],
      [{ email: 'role@example.test', role: 'owner' }, /role/],
      [{ email: 'org@example.test', org_id: 'nope' }, /org_id/],
      [{ email: 'org@example.test', org_id: '00000000-0000-4000-8000-000000000000' }, /org_id/],
      [{ email: 'x@example.test', extra: 1 }, /unknown body field: extra/],
      [{}, /missing required field: email/],
    ];
    for (const [body, msg] of cases) {
      const r = await d.api('POST', '/v1/users', { token: admin, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatch(msg);
    }
  });

  it('concurrent creates of one e-mail: exactly one 201, the rest 409 (re-checked inside the transaction)', async () => {
    const rs = await Promise.all(Array.from({ length: 5 }, () => d.api('POST', '/v1/users', { token: admin, body: { email: 'race@example.test' } })));
    expect(rs.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(d.db.prepare(`SELECT COUNT(*) AS n FROM acct_users WHERE email = 'race@example.test'`).get()).toEqual({ n: 1 });
  });

  it('413 for a body over 8 KiB', async () => {
    const r = await d.api('POST', '/v1/users', { token: admin, body: { email: 'big@example.test', password: 'x'.repeat(9000) } });
    expect(r.status).toBe(413);
  });

  it('external users (no home organization) show external true and no org_id', async () => {
    const u = await makeUser(d);
    d.db.prepare('UPDATE acct_users SET org_id = NULL WHERE id = ?').run(u.id);
    const list = (await d.api('GET', '/v1/users?page_size=200', { token: admin })).body.users;
    const view = list.find((x: { email: string }) => x.email === u.email);
    expect(view.external).toBe(true);
    expect(view).not.toHaveProperty('org_id');
  });

  it('403 when a non-platform-admin asks for a platform admin', async () => {
    const r = await d.api('POST', '/v1/users', { token: c.admin.token, body: { email: 'pa@example.test', role: 'admin' } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('only a platform admin may create a platform admin');
  });

  it('a project admin creates users in their own org only; members and outsiders cannot create', async () => {
    const ok = await d.api('POST', '/v1/users', { token: c.admin.token, body: { email: 'by-project-admin@example.test' } });
    expect(ok.status, ok.text).toBe(201);
    const other = await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'elsewhere' } });
    const there = await d.api('POST', '/v1/users', { token: c.admin.token, body: { email: 'there@example.test', org_id: other.body.id } });
    expect(there.status).toBe(403);
    expect(there.body.error).toBe('creating in that organization requires administering it');
    for (const t of [c.member.token, c.outsider.token]) {
      const r = await d.api('POST', '/v1/users', { token: t, body: { email: 'nobody@example.test' } });
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('creating requires administering an organization or project');
    }
    expect((await d.api('POST', '/v1/users', { token: c.sa.token, body: { email: 'sa@example.test' } })).status).toBe(403);
    expect((await d.api('POST', '/v1/users', { body: { email: 'anon@example.test' } })).status).toBe(401);
  });

  it('an org admin creates users in the org they administer', async () => {
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'acme', name: 'Acme' } })).body;
    const boss = await makeUser(d, { orgId: org.id });
    await d.api('POST', `/v1/orgs/${org.id}/members`, { token: admin, body: { email: boss.email, role: 'admin' } });
    const r = await d.api('POST', '/v1/users', { token: boss.token, body: { email: 'acme-dev@example.test' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.user.org_id).toBe(org.id);
    const elsewhere = await d.api('POST', '/v1/users', { token: boss.token, body: { email: 'acme-x@example.test', org_id: orgId() } });
    expect(elsewhere.status).toBe(403);
  });
});

describe('GET /v1/users', () => {
  it('lists every account with the user view, sorted by email, for platform admins only', async () => {
    const r = await d.api('GET', '/v1/users', { token: admin });
    expect(r.status).toBe(200);
    expect(r.body.unowned_agents).toEqual([]);
    const emails = r.body.users.map((u: { email: string }) => u.email);
    expect(emails).toEqual([...emails].sort());
    const adminView = r.body.users.find((u: { email: string }) => u.email === ADMIN_EMAIL);
    expect(adminView).toMatchObject({ role: 'admin', must_change_password: false, external: false });
    expect(adminView.projects).toContain('default');
    const memberView = r.body.users.find((u: { email: string }) => u.email === c.member.email);
    expect(memberView.projects).toEqual([c.project.slug]);
    expect((await d.api('GET', '/v1/users', { token: c.admin.token })).status).toBe(403);
    expect((await d.api('GET', '/v1/users', { token: c.sa.token })).status).toBe(403);
    expect((await d.api('GET', '/v1/users')).status).toBe(401);
  });

  it('agents come from the agents hook, scoped to the caller\'s resource grants; unowned agents from their hook', async () => {
    const hooks = d.app.ctx.hooks;
    const agentNames = (ids: string[]) => ids.flatMap((id) => (id === c.project.id ? ['alpha', 'beta'] : []));
    hooks.agentNames.push(agentNames);
    hooks.unownedAgents.push(() => ['legacy']);
    try {
      // A platform admin (not an org admin) holds no resource grant on the project: the agents are not theirs to see.
      const pa = c.platformAdmin.token;
      const asAdmin = (await d.api('GET', '/v1/users?page_size=200', { token: pa })).body;
      expect(asAdmin.unowned_agents).toEqual(['legacy']);
      expect(asAdmin.users.find((u: { email: string }) => u.email === c.member.email)).toMatchObject({ agents: [], agent_count: 0 });
      // With break-glass the platform admin reaches the contents, and so the agent names.
      const bg = await d.api('POST', `/v1/projects/${c.project.id}/break-glass`, { token: pa, body: { reason: 'incident 42: agents down' } });
      expect(bg.status, bg.text).toBe(201);
      const after = (await d.api('GET', '/v1/users?page_size=200', { token: pa })).body;
      expect(after.users.find((u: { email: string }) => u.email === c.member.email)).toMatchObject({ agents: ['alpha', 'beta'], agent_count: 2 });
      // The bootstrap admin is org admin of the default org, so inherits the contents.
      const viaOrg = (await d.api('GET', '/v1/users?page_size=200', { token: admin })).body;
      expect(viaOrg.users.find((u: { email: string }) => u.email === c.member.email).agent_count).toBe(2);
    } finally {
      const me = d.db.prepare('SELECT id FROM acct_users WHERE email = ?').get(c.platformAdmin.email) as { id: string };
      d.db.prepare('DELETE FROM acct_project_members WHERE user_id = ? AND break_glass = 1').run(me.id);
      hooks.agentNames.splice(hooks.agentNames.indexOf(agentNames), 1);
      hooks.unownedAgents.pop();
    }
  });

  it('pages with page_size, rejects tampered and foreign tokens', async () => {
    const all: string[] = [];
    let token: string | undefined;
    do {
      const r = await d.api('GET', `/v1/users?page_size=2${token ? `&page_token=${token}` : ''}`, { token: admin });
      expect(r.status).toBe(200);
      expect(r.body.users.length).toBeLessThanOrEqual(2);
      all.push(...r.body.users.map((u: { email: string }) => u.email));
      token = r.body.next_page_token;
    } while (token);
    const full = (await d.api('GET', '/v1/users?limit=200', { token: admin })).body.users.map((u: { email: string }) => u.email);
    expect(all).toEqual(full);
    const first = (await d.api('GET', '/v1/users?page_size=1', { token: admin })).body.next_page_token as string;
    const tampered = first.slice(0, -2) + (first.endsWith('A') ? 'BB' : 'AA');
    expect((await d.api('GET', `/v1/users?page_token=${tampered}`, { token: admin })).body.error).toBe('page_token is invalid');
    const orgToken = (await d.api('GET', '/v1/orgs?page_size=1', { token: admin })).body.next_page_token as string;
    const foreign = await d.api('GET', `/v1/users?page_token=${orgToken}`, { token: admin });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('page_token was issued for a different list');
    expect((await d.api('GET', '/v1/users?page_size=201', { token: admin })).status).toBe(400);
    expect((await d.api('GET', '/v1/users?page_size=0', { token: admin })).status).toBe(400);
  });
});

describe('PATCH /v1/users/{email}', () => {
  it('promotes and demotes, effective on the next request, audited', async () => {
    const u = await makeUser(d);
    expect((await d.api('GET', '/v1/orgs', { token: u.token })).status).toBe(403);
    const r = await d.api('PATCH', `/v1/users/${u.email}`, { token: admin, body: { role: 'admin' } });
    expect(r.status).toBe(200);
    expect(r.body.user.role).toBe('admin');
    expect(r.body.note).toMatch(/effective immediately/);
    // The same session token now acts as a platform admin: roles are re-read live.
    expect((await d.api('GET', '/v1/orgs', { token: u.token })).status).toBe(200);
    const back = await d.api('PATCH', `/v1/users/${u.email}`, { token: admin, body: { role: 'user' } });
    expect(back.body.user.role).toBe('user');
    expect((await d.api('GET', '/v1/orgs', { token: u.token })).status).toBe(403);
    expect(audit('user.update_role', u.email)).toHaveLength(2);
    const same = await d.api('PATCH', `/v1/users/${u.email}`, { token: admin, body: { role: 'user' } });
    expect(same.body.note).toMatch(/nothing changed/);
  });

  it('400 empty body, 400 bad role, 400 own admin role, 404 unknown', async () => {
    const empty = await d.api('PATCH', `/v1/users/${c.member.email}`, { token: admin, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/empty body/);
    expect((await d.api('PATCH', `/v1/users/${c.member.email}`, { token: admin, body: { role: 'root' } })).status).toBe(400);
    const own = await d.api('PATCH', `/v1/users/${ADMIN_EMAIL}`, { token: admin, body: { role: 'user' } });
    expect(own.status).toBe(400);
    expect(own.body.error).toMatch(/your own admin role/);
    expect((await d.api('PATCH', '/v1/users/ghost@example.test', { token: admin, body: { role: 'user' } })).status).toBe(404);
  });

  it('409 demoting and deleting the last platform admin (guard checked at the service: over HTTP the caller is always a second admin)', async () => {
    const d2 = await startTestDaemon();
    try {
      // A caller whose session predates losing the admin role: the only way two admins become one mid-request.
      const u = await makeUser(d2);
      const caller = { kind: 'user' as const, userId: u.id, email: u.email, platformRole: 'admin' as const, mustChangePassword: false, credential: 'session' as const };
      const err = (fn: () => unknown) => {
        try {
          fn();
        } catch (e) {
          return e as { status: number; message: string };
        }
        throw new Error('expected an error');
      };
      const demote = err(() => updateUser(d2.app.ctx, caller, ADMIN_EMAIL, { role: 'user' }, 'req_test'));
      expect(demote).toMatchObject({ status: 409, message: 'cannot demote the last platform admin' });
      const del = err(() => removeUser(d2.app.ctx, caller, ADMIN_EMAIL, 'req_test'));
      expect(del).toMatchObject({ status: 409, message: 'cannot delete the last platform admin' });
    } finally {
      await d2.close();
    }
  });
});

describe('DELETE /v1/users/{email}', () => {
  it('deletes the account with its grants and keys, audited; sessions stop working', async () => {
    const u = await makeUser(d);
    grant(d, c.project.id, u.id, 'member');
    const key = await d.api('POST', '/v1/users/me/keys', { token: u.token, body: { display_name: 'ci' } });
    const r = await d.api('DELETE', `/v1/users/${u.email}`, { token: admin });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ deleted: true, email: u.email, note: expect.stringMatching(/agents it deployed keep running/) });
    expect(d.db.prepare('SELECT COUNT(*) AS n FROM acct_project_members WHERE user_id = ?').get(u.id)).toEqual({ n: 0 });
    expect((await d.api('GET', '/v1/auth/me', { token: u.token })).status).toBe(401);
    expect((await d.api('GET', '/v1/auth/me', { token: key.body.secret })).status).toBe(401);
    expect(audit('user.delete', u.email)).toHaveLength(1);
    expect((await d.api('DELETE', `/v1/users/${u.email}`, { token: admin })).status).toBe(404);
  });

  it('400 deleting your own account; 403 for non-admins', async () => {
    const own = await d.api('DELETE', `/v1/users/${ADMIN_EMAIL}`, { token: admin });
    expect(own.status).toBe(400);
    expect(own.body.error).toBe('you cannot delete your own account');
    expect((await d.api('DELETE', `/v1/users/${c.member.email}`, { token: c.admin.token })).status).toBe(403);
  });
});

describe('POST /v1/users/{email}/reset-password', () => {
  it('returns a temporary password once, the old one stops working, a change is required', async () => {
    const u = await makeUser(d);
    const r = await d.api('POST', `/v1/users/${u.email}/reset-password`, { token: admin });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ email: u.email, note: expect.stringMatching(/shown only now/) });
    expect(passwordProblem(r.body.temporary_password)).toBeUndefined();
    expect((await d.api('POST', '/v1/auth/login', { body: { email: u.email, password: FIXTURE_PASSWORD } })).status).toBe(401);
    const login = await d.api('POST', '/v1/auth/login', { body: { email: u.email, password: r.body.temporary_password } });
    expect(login.body.must_change_password).toBe(true);
    expect(audit('user.reset_password', u.email)).toHaveLength(1);
    expect((await d.api('POST', '/v1/users/ghost@example.test/reset-password', { token: admin })).status).toBe(404);
    expect((await d.api('POST', `/v1/users/${u.email}/reset-password`, { token: c.admin.token })).status).toBe(403);
  });
});
