import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, grant, makeProject, makeServiceAccountKey, makeUser } from '../helpers/fixtures.js';

const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
let d: TestDaemon;
let admin: string;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startTestDaemon({}, { clock });
  admin = await d.adminToken();
  c = await cast(d);
});
afterAll(() => d.close());

const members = async (projectId: string, token = admin) =>
  (await d.api('GET', `/v1/projects/${projectId}/members?page_size=200`, { token })).body.members as any[];
let orgN = 0;
/** An organization without org admins, so direct grants are the only real admins of its projects. */
const freshOrg = async () => (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: `guard-${++orgN}` } })).body.id as string;
const auditActions = (projectId: string) =>
  (d.db.prepare('SELECT action FROM acct_audit WHERE project_id = ? ORDER BY seq').all(projectId) as { action: string }[]).map((r) => r.action);

describe('GET /v1/projects/{id}/members', () => {
  it('lists users and service accounts with the member view; visible to members and the project key', async () => {
    const list = await members(c.project.id, c.member.token);
    expect(list).toContainEqual({ user_id: c.admin.id, email: c.admin.email, role: 'admin', kind: 'user', external: false, created_at: expect.any(String) });
    expect(list).toContainEqual(expect.objectContaining({ user_id: c.member.id, role: 'member', kind: 'user' }));
    const sa = list.find((m) => m.kind === 'service_account');
    expect(sa).toMatchObject({
      service_account_id: c.sa.serviceAccountId,
      user_id: c.sa.serviceAccountId,
      email: `${c.sa.name}@${c.project.short}.iam.platform.internal`,
      role: 'member',
      external: false,
    });
    expect((await d.api('GET', `/v1/projects/${c.project.id}/members`, { token: c.sa.token })).status).toBe(200);
    expect((await d.api('GET', `/v1/projects/${c.project.id}/members`, { token: c.platformAdmin.token })).status).toBe(200);
    expect((await d.api('GET', `/v1/projects/${c.project.id}/members`, { token: c.outsider.token })).status).toBe(404);
    expect((await d.api('GET', `/v1/projects/${c.project.id}/members`)).status).toBe(401);
  });

  it('pages: sizes, tampered token, token from another project\'s list', async () => {
    const p = makeProject(d);
    for (let i = 0; i < 5; i++) grant(d, p.id, (await makeUser(d)).id, 'member');
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await d.api('GET', `/v1/projects/${p.id}/members?limit=2${token ? `&page_token=${token}` : ''}`, { token: admin });
      expect(r.status).toBe(200);
      seen.push(...r.body.members.map((m: { user_id: string }) => m.user_id));
      token = r.body.next_page_token;
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(5);
    const first = (await d.api('GET', `/v1/projects/${p.id}/members?page_size=2`, { token: admin })).body.next_page_token as string;
    const [body, mac] = first.split('.');
    const forged = Buffer.from(JSON.stringify({ l: `members:${p.id}`, o: 0 })).toString('base64url') + '.' + mac;
    expect((await d.api('GET', `/v1/projects/${p.id}/members?page_token=${forged}`, { token: admin })).body.error).toBe('page_token is invalid');
    expect(body).toBeTruthy();
    const foreign = await d.api('GET', `/v1/projects/${c.project.id}/members?page_token=${first}`, { token: admin });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('page_token was issued for a different list');
  });
});

describe('POST /v1/projects/{id}/members', () => {
  it('grants a role to an existing account (201), same role again 200, other role 409, audited', async () => {
    const p = makeProject(d);
    grant(d, p.id, c.admin.id, 'admin');
    const u = await makeUser(d);
    const r = await d.api('POST', `/v1/projects/${p.id}/members`, { token: c.admin.token, body: { email: u.email.toUpperCase() } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.member).toMatchObject({ user_id: u.id, email: u.email, role: 'member', kind: 'user', external: false });
    expect(r.body.note).toMatch(/granted to the existing account/);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: u.token })).body.your_role).toBe('member');
    const again = await d.api('POST', `/v1/projects/${p.id}/members`, { token: c.admin.token, body: { email: u.email, role: 'member' } });
    expect(again.status).toBe(200);
    const other = await d.api('POST', `/v1/projects/${p.id}/members`, { token: c.admin.token, body: { email: u.email, role: 'admin' } });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatch(/already a member with role member/);
    expect(auditActions(p.id)).toContain('member.add');
  });

  it('concurrent adds of one account: one 201, the rest 200, a single grant row', async () => {
    const p = makeProject(d);
    const u = await makeUser(d);
    const rs = await Promise.all(Array.from({ length: 4 }, () => d.api('POST', `/v1/projects/${p.id}/members`, { token: admin, body: { email: u.email } })));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 200, 200, 201]);
    expect(d.db.prepare('SELECT COUNT(*) AS n FROM acct_project_members WHERE project_id = ? AND user_id = ?').get(p.id, u.id)).toEqual({ n: 1 });
  });

  it('404 no account (invite instead), 400 invalid e-mail or role, external accounts flagged', async () => {
    const ghost = await d.api('POST', `/v1/projects/${c.project.id}/members`, { token: c.admin.token, body: { email: 'ghost@example.test' } });
    expect(ghost.status).toBe(404);
    expect(ghost.body.error).toMatch(/invite them instead/);
    expect((await d.api('POST', `/v1/projects/${c.project.id}/members`, { token: c.admin.token, body: { email: 'nope' } })).status).toBe(400);
    const badRole = await d.api('POST', `/v1/projects/${c.project.id}/members`, { token: c.admin.token, body: { email: c.outsider.email, role: 'owner' } });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error).toMatch(/role/);
    const ext = await makeUser(d);
    d.db.prepare('UPDATE acct_users SET org_id = NULL WHERE id = ?').run(ext.id);
    const r = await d.api('POST', `/v1/projects/${c.project.id}/members`, { token: c.admin.token, body: { email: ext.email } });
    expect(r.body.member.external).toBe(true);
  });

  it('role matrix: project admin, org admin and platform admin may; member 403; outsider 404; machine key 403', async () => {
    const p = makeProject(d);
    grant(d, p.id, c.admin.id, 'admin');
    grant(d, p.id, c.member.id, 'member');
    const key = makeServiceAccountKey(d, p.id, 'admin');
    const add = async (token: string | undefined) => (await d.api('POST', `/v1/projects/${p.id}/members`, { token, body: { email: (await makeUser(d)).email } })).status;
    expect(await add(c.admin.token)).toBe(201);
    expect(await add(admin)).toBe(201); // org admin of default (and platform admin)
    expect(await add(c.platformAdmin.token)).toBe(201); // metadata only
    expect(await add(c.member.token)).toBe(403);
    expect(await add(c.outsider.token)).toBe(404);
    expect(await add(key.token)).toBe(403); // even an admin service account cannot manage memberships
    expect(await add(undefined)).toBe(401);
  });
});

describe('PATCH and DELETE user members', () => {
  it('changes roles and removes grants; 409 for the last real admin; 404 non-members', async () => {
    const p = makeProject(d, { orgId: await freshOrg() });
    const a = await makeUser(d);
    const b = await makeUser(d);
    grant(d, p.id, a.id, 'admin');
    grant(d, p.id, b.id, 'member');
    const last = await d.api('PATCH', `/v1/projects/${p.id}/members/${a.id}`, { token: a.token, body: { role: 'member' } });
    expect(last.status).toBe(409);
    expect(last.body.error).toMatch(/last admin/);
    expect((await d.api('DELETE', `/v1/projects/${p.id}/members/${a.id}`, { token: a.token })).status).toBe(409);
    // Service-account admins do not count as real admins.
    makeServiceAccountKey(d, p.id, 'admin');
    expect((await d.api('DELETE', `/v1/projects/${p.id}/members/${a.id}`, { token: a.token })).status).toBe(409);
    const promote = await d.api('PATCH', `/v1/projects/${p.id}/members/${b.id}`, { token: a.token, body: { role: 'admin' } });
    expect(promote.status).toBe(200);
    expect(promote.body).toEqual({ user_id: b.id, role: 'admin' });
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: b.token })).body.your_role).toBe('admin');
    const demote = await d.api('PATCH', `/v1/projects/${p.id}/members/${a.email}`, { token: b.token, body: { role: 'member' } });
    expect(demote.body).toEqual({ user_id: a.id, role: 'member' });
    const rm = await d.api('DELETE', `/v1/projects/${p.id}/members/${a.id}`, { token: b.token });
    expect(rm.status).toBe(200);
    expect(rm.body).toMatchObject({ deleted: true, user_id: a.id });
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: a.token })).status).toBe(404);
    expect((await d.api('DELETE', `/v1/projects/${p.id}/members/${a.id}`, { token: b.token })).status).toBe(404);
    expect((await d.api('PATCH', `/v1/projects/${p.id}/members/${a.id}`, { token: b.token, body: { role: 'admin' } })).status).toBe(404);
    expect((await d.api('PATCH', `/v1/projects/${p.id}/members/${b.id}`, { token: b.token, body: { role: 'boss' } })).status).toBe(400);
    expect(auditActions(p.id)).toEqual(expect.arrayContaining(['member.update', 'member.remove']));
  });

  it('member 403, outsider 404, machine key 403', async () => {
    const path = `/v1/projects/${c.project.id}/members/${c.member.id}`;
    expect((await d.api('PATCH', path, { token: c.member.token, body: { role: 'admin' } })).status).toBe(403);
    expect((await d.api('DELETE', path, { token: c.member.token })).status).toBe(403);
    expect((await d.api('DELETE', path, { token: c.outsider.token })).status).toBe(404);
    expect((await d.api('DELETE', path, { token: c.sa.token })).status).toBe(403);
  });
});

describe('service-account members', () => {
  it('PATCH changes the role; DELETE removes only the grant, the account and key live on', async () => {
    const p = makeProject(d);
    grant(d, p.id, c.admin.id, 'admin');
    const sa = makeServiceAccountKey(d, p.id, 'member');
    const patch = await d.api('PATCH', `/v1/projects/${p.id}/members/service-accounts/${sa.serviceAccountId}`, { token: c.admin.token, body: { role: 'admin' } });
    expect(patch.status, patch.text).toBe(200);
    expect(patch.body).toEqual({ service_account_id: sa.serviceAccountId, role: 'admin' });
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: sa.token })).body.your_role).toBe('admin');
    const byName = await d.api('PATCH', `/v1/projects/${p.id}/members/service-accounts/${sa.name}`, { token: c.admin.token, body: { role: 'member' } });
    expect(byName.body.role).toBe('member');
    const rm = await d.api('DELETE', `/v1/projects/${p.id}/members/service-accounts/${sa.serviceAccountId}`, { token: c.admin.token });
    expect(rm.status).toBe(200);
    expect(rm.body).toMatchObject({ deleted: true, service_account_id: sa.serviceAccountId, note: expect.stringMatching(/keys live on/) });
    expect(d.db.prepare('SELECT COUNT(*) AS n FROM acct_service_accounts WHERE id = ?').get(sa.serviceAccountId)).toEqual({ n: 1 });
    // The key still authenticates (me works) but holds no role on the project.
    expect((await d.api('GET', '/v1/auth/me', { token: sa.token })).status).toBe(200);
    expect((await d.api('GET', `/v1/projects/${p.id}/members`, { token: sa.token })).status).toBe(404);
    expect((await d.api('DELETE', `/v1/projects/${p.id}/members/service-accounts/${sa.serviceAccountId}`, { token: c.admin.token })).status).toBe(404);
    expect(auditActions(p.id)).toEqual(expect.arrayContaining(['member.service_account.update', 'member.service_account.remove']));
  });

  it('member 403, outsider 404, the key itself 403', async () => {
    const path = `/v1/projects/${c.project.id}/members/service-accounts/${c.sa.serviceAccountId}`;
    expect((await d.api('PATCH', path, { token: c.member.token, body: { role: 'admin' } })).status).toBe(403);
    expect((await d.api('PATCH', path, { token: c.outsider.token, body: { role: 'admin' } })).status).toBe(404);
    expect((await d.api('PATCH', path, { token: c.sa.token, body: { role: 'admin' } })).status).toBe(403);
  });
});

describe('break-glass', () => {
  it('grants a platform admin time-limited contents access, visible to members, audited, expiring on its own', async () => {
    const p = makeProject(d);
    grant(d, p.id, c.member.id, 'member');
    grant(d, p.id, c.admin.id, 'admin');
    const pa = c.platformAdmin;
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: pa.token })).body.your_role).toBeUndefined();
    const r = await d.api('POST', `/v1/projects/${p.id}/break-glass`, { token: pa.token, body: { reason: 'INC-1234: prod outage', minutes: 30 } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.grant).toMatchObject({
      user_id: pa.id,
      email: pa.email,
      role: 'admin',
      kind: 'user',
      break_glass: true,
      reason: 'INC-1234: prod outage',
      granted_by: pa.email,
      expired: false,
      expires_at: new Date(clock.now() + 30 * 60_000).toISOString(),
    });
    expect(r.body.note).toMatch(/visible to the project's members/);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: pa.token })).body).toMatchObject({ your_role: 'admin', your_metadata_role: 'admin' });
    const seen = (await members(p.id, c.member.token)).find((m) => m.break_glass);
    expect(seen).toMatchObject({ reason: 'INC-1234: prod outage', expired: false });
    expect(auditActions(p.id)).toContain('break_glass.grant');
    // Holding a grant already: 403.
    const twice = await d.api('POST', `/v1/projects/${p.id}/break-glass`, { token: pa.token, body: { reason: 'INC-1234: prod outage' } });
    expect(twice.status).toBe(403);
    expect(twice.body.error).toMatch(/already hold a break-glass grant/);

    clock.advance(30 * 60_000 + 1);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: pa.token })).body.your_role).toBeUndefined();
    const history = (await members(p.id, c.member.token)).find((m) => m.break_glass);
    expect(history).toMatchObject({ expired: true, reason: 'INC-1234: prod outage' });
    // An expired admin does not count as a real admin, and does not block a new grant.
    const again = await d.api('POST', `/v1/projects/${p.id}/break-glass`, { token: pa.token, body: { reason: 'INC-1235: follow-up', role: 'member' } });
    expect(again.status).toBe(201);
    expect(again.body.grant).toMatchObject({ role: 'member', expires_at: new Date(clock.now() + 240 * 60_000).toISOString() });
    // DELETE on the member ends it sooner; the row stays as history.
    const end = await d.api('DELETE', `/v1/projects/${p.id}/members/${pa.id}`, { token: c.admin.token });
    expect(end.status, end.text).toBe(200);
    expect(end.body.note).toMatch(/ended early/);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: pa.token })).body.your_role).toBeUndefined();
    const rows = (await members(p.id, c.member.token)).filter((m) => m.break_glass);
    expect(rows).toHaveLength(2);
    expect(rows.every((m) => m.expired)).toBe(true);
    expect(auditActions(p.id)).toContain('break_glass.revoke');
  });

  it('org admins count as real admins for the guard (they administer the project live)', async () => {
    const orgId = await freshOrg();
    const p = makeProject(d, { orgId });
    const a = await makeUser(d);
    grant(d, p.id, a.id, 'admin');
    expect((await d.api('PATCH', `/v1/projects/${p.id}/members/${a.id}`, { token: a.token, body: { role: 'member' } })).status).toBe(409);
    const boss = await makeUser(d);
    await d.api('POST', `/v1/orgs/${orgId}/members`, { token: admin, body: { email: boss.email, role: 'admin' } });
    expect((await d.api('PATCH', `/v1/projects/${p.id}/members/${a.id}`, { token: a.token, body: { role: 'member' } })).status).toBe(200);
  });

  it('break-glass admins do not count toward the last-real-admin guard', async () => {
    const p = makeProject(d, { orgId: await freshOrg() });
    const a = await makeUser(d);
    grant(d, p.id, a.id, 'admin');
    await d.api('POST', `/v1/projects/${p.id}/break-glass`, { token: c.platformAdmin.token, body: { reason: 'audit of last admin' } });
    expect((await d.api('DELETE', `/v1/projects/${p.id}/members/${a.id}`, { token: a.token })).status).toBe(409);
  });

  it('400 reason missing or short, 400 over 24 hours; boundary 1440 accepted', async () => {
    const p = makeProject(d);
    const path = `/v1/projects/${p.id}/break-glass`;
    const t = c.platformAdmin.token;
    expect((await d.api('POST', path, { token: t, body: {} })).body.error).toBe('missing required field: reason');
    const short = await d.api('POST', path, { token: t, body: { reason: 'too short' } });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatch(/at least 12 characters/);
    const long = await d.api('POST', path, { token: t, body: { reason: 'a long enough reason', minutes: 1441 } });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatch(/over 24 hours/);
    expect((await d.api('POST', path, { token: t, body: { reason: 'a long enough reason', minutes: 0 } })).status).toBe(400);
    expect((await d.api('POST', path, { token: t, body: { reason: 'a long enough reason', role: 'root' } })).status).toBe(400);
    const max = await d.api('POST', path, { token: t, body: { reason: 'a long enough reason', minutes: 1440 } });
    expect(max.status).toBe(201);
  });

  it('403 for callers who already hold a grant (org admin, project admin), non-platform-admins and machine keys; 404 outsiders', async () => {
    const path = `/v1/projects/${c.project.id}/break-glass`;
    const body = { reason: 'a long enough reason' };
    const orgAdmin = await d.api('POST', path, { token: admin, body });
    expect(orgAdmin.status).toBe(403);
    expect(orgAdmin.body.error).toMatch(/already hold a grant/);
    const direct = await makeUser(d, { platformAdmin: true });
    grant(d, c.project.id, direct.id, 'member');
    expect((await d.api('POST', path, { token: direct.token, body })).status).toBe(403);
    expect((await d.api('POST', path, { token: c.admin.token, body })).status).toBe(403);
    expect((await d.api('POST', path, { token: c.member.token, body })).status).toBe(403);
    expect((await d.api('POST', path, { token: c.sa.token, body })).status).toBe(403);
    expect((await d.api('POST', path, { token: c.outsider.token, body })).status).toBe(404);
    expect((await d.api('POST', path, { body })).status).toBe(401);
  });
});

describe('break-glass edges', () => {
  it('works with a personal API key (a human credential), and its row cannot be PATCHed, only ended', async () => {
    const p = makeProject(d, { orgId: await freshOrg() });
    const a = await makeUser(d);
    grant(d, p.id, a.id, 'admin');
    const pa = await makeUser(d, { platformAdmin: true });
    const key = (await d.api('POST', '/v1/users/me/keys', { token: pa.token, body: { display_name: 'laptop' } })).body.secret as string;
    const r = await d.api('POST', `/v1/projects/${p.id}/break-glass`, { token: key, body: { reason: 'on-call: rotate secrets', role: 'member' } });
    expect(r.status, r.text).toBe(201);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: key })).body.your_role).toBe('member');
    const patch = await d.api('PATCH', `/v1/projects/${p.id}/members/${pa.id}`, { token: a.token, body: { role: 'admin' } });
    expect(patch.status).toBe(404);
    expect(patch.body.error).toMatch(/break-glass grants cannot be changed/);
    const row = d.db.prepare(`SELECT details FROM acct_audit WHERE action = 'break_glass.grant' AND project_id = ?`).get(p.id) as { details: string };
    expect(JSON.parse(row.details)).toMatchObject({ reason: 'on-call: rotate secrets', role: 'member', minutes: 240 });
  });

  it('expiry is exact to the millisecond of the clock', async () => {
    const p = makeProject(d, { orgId: await freshOrg() });
    const pa = await makeUser(d, { platformAdmin: true });
    await d.api('POST', `/v1/projects/${p.id}/break-glass`, { token: pa.token, body: { reason: 'short window test', minutes: 1 } });
    clock.advance(59_999);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: pa.token })).body.your_role).toBe('admin');
    clock.advance(1);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: pa.token })).body.your_role).toBeUndefined();
    // Metadata authority stays: the project is still visible to the platform admin.
    expect((await d.api('GET', `/v1/projects/${p.id}/members`, { token: pa.token })).body.members[0]).toMatchObject({ expired: true });
  });
});
