import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, makeProject, makeUser } from '../helpers/fixtures.js';

let d: TestDaemon;
let admin: string;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.adminToken();
  c = await cast(d);
});
afterAll(() => d.close());

const defaultOrg = () => (d.db.prepare(`SELECT id FROM acct_orgs WHERE slug = 'default'`).get() as { id: string }).id;
const auditCount = (action: string) => (d.db.prepare('SELECT COUNT(*) AS n FROM acct_audit WHERE action = ?').get(action) as { n: number }).n;

describe('organizations', () => {
  it('creates with a trimmed, lowercased slug and lists with counts', async () => {
    const r = await d.api('POST', '/v1/orgs', { token: admin, body: { slug: '  Globex ', name: 'Globex Corp' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ slug: 'globex', name: 'Globex Corp', projects: 0, users: 0, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(auditCount('org.create')).toBeGreaterThan(0);
    const list = await d.api('GET', '/v1/orgs', { token: admin });
    expect(list.status).toBe(200);
    const def = list.body.orgs.find((o: { slug: string }) => o.slug === 'default');
    expect(def.projects).toBeGreaterThanOrEqual(2);
    expect(def.users).toBeGreaterThanOrEqual(5);
    expect(list.body.orgs.map((o: { slug: string }) => o.slug)).toEqual([...list.body.orgs.map((o: { slug: string }) => o.slug)].sort());
  });

  it('rejects a taken slug (409), a bad slug and unknown fields (400)', async () => {
    expect((await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'default' } })).status).toBe(409);
    expect((await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'no spaces' } })).status).toBe(400);
    expect((await d.api('POST', '/v1/orgs', { token: admin, body: { slug: '1starts-digit' } })).status).toBe(400);
    const unknown = await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'ok', colour: 'red' } });
    expect(unknown.body.error).toBe('unknown body field: colour');
  });

  it('is platform admin only: 403 for org and project admins, members and machine keys, 401 anonymous', async () => {
    for (const t of [c.admin.token, c.member.token, c.outsider.token, c.sa.token]) {
      expect((await d.api('GET', '/v1/orgs', { token: t })).status).toBe(403);
      expect((await d.api('POST', '/v1/orgs', { token: t, body: { slug: 'nope' } })).status).toBe(403);
    }
    expect((await d.api('GET', '/v1/orgs')).status).toBe(401);
  });

  it('delete: 400 non-UUID, 404 unknown, 403 default, 409 projects remain, 409 users remain, 200 when empty', async () => {
    expect((await d.api('DELETE', '/v1/orgs/globex', { token: admin })).body.error).toBe('orgID must be a UUID');
    expect((await d.api('DELETE', '/v1/orgs/00000000-0000-4000-8000-000000000000', { token: admin })).status).toBe(404);
    const def = await d.api('DELETE', `/v1/orgs/${defaultOrg()}`, { token: admin });
    expect(def.status).toBe(403);
    expect(def.body.error).toBe('the default organization cannot be deleted');
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'doomed' } })).body;
    const p = makeProject(d, { orgId: org.id });
    const withProject = await d.api('DELETE', `/v1/orgs/${org.id}`, { token: admin });
    expect(withProject.status).toBe(409);
    expect(withProject.body.error).toMatch(/still has 1 project/);
    expect((await d.api('DELETE', `/v1/projects/${p.id}`, { token: admin })).status).toBe(200);
    const u = await makeUser(d, { orgId: org.id });
    const withUser = await d.api('DELETE', `/v1/orgs/${org.id}`, { token: admin });
    expect(withUser.status).toBe(409);
    expect(withUser.body.error).toMatch(/still has 1 user/);
    await d.api('DELETE', `/v1/users/${u.email}`, { token: admin });
    const ok = await d.api('DELETE', `/v1/orgs/${org.id}`, { token: admin });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ deleted: true, org: { id: org.id, slug: 'doomed' } });
    expect(auditCount('org.delete')).toBe(1);
  });

  it('pages orgs; tokens are bound to the list', async () => {
    for (const s of ['pg-a', 'pg-b', 'pg-c']) await d.api('POST', '/v1/orgs', { token: admin, body: { slug: s } });
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const r = await d.api('GET', `/v1/orgs?page_size=2${token ? `&page_token=${token}` : ''}`, { token: admin });
      expect(r.body.orgs.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.orgs.map((o: { slug: string }) => o.slug));
      token = r.body.next_page_token;
    } while (token);
    expect(seen).toEqual((await d.api('GET', '/v1/orgs?page_size=200', { token: admin })).body.orgs.map((o: { slug: string }) => o.slug));
    const usersToken = (await d.api('GET', '/v1/users?page_size=1', { token: admin })).body.next_page_token;
    expect((await d.api('GET', `/v1/orgs?page_token=${usersToken}`, { token: admin })).status).toBe(400);
    expect((await d.api('GET', `/v1/orgs?page_token=garbage.garbage`, { token: admin })).status).toBe(400);
  });
});

describe('organization members', () => {
  it('add (201, note for admin), same role again 200, other role 409, unknown account 404', async () => {
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'members-org' } })).body;
    const u = await makeUser(d);
    const path = `/v1/orgs/${org.id}/members`;
    const add = await d.api('POST', path, { token: admin, body: { email: u.email } });
    expect(add.status, add.text).toBe(201);
    expect(add.body.member).toMatchObject({ user_id: u.id, email: u.email, role: 'member' });
    expect(add.body.note).toBeUndefined();
    const again = await d.api('POST', path, { token: admin, body: { email: u.email, role: 'member' } });
    expect(again.status).toBe(200);
    const other = await d.api('POST', path, { token: admin, body: { email: u.email, role: 'admin' } });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatch(/use|PATCH/);
    expect((await d.api('POST', path, { token: admin, body: { email: 'ghost@example.test' } })).status).toBe(404);
    expect((await d.api('POST', path, { token: admin, body: { email: 'bad' } })).status).toBe(400);
    expect((await d.api('POST', path, { token: admin, body: { email: u.email, role: 'owner' } })).status).toBe(400);
    const boss = await makeUser(d);
    const asAdmin = await d.api('POST', path, { token: admin, body: { email: boss.email, role: 'admin' } });
    expect(asAdmin.status).toBe(201);
    expect(asAdmin.body.note).toMatch(/inherit admin on every project/);
    const list = await d.api('GET', path, { token: admin });
    expect(list.body.members.map((m: { email: string }) => m.email).sort()).toEqual([u.email, boss.email].sort());
    expect((await d.api('GET', `/v1/orgs/not-a-uuid/members`, { token: admin })).status).toBe(400);
  });

  it('org admins inherit admin on every project of the org, live, with no rows written; removal takes it away', async () => {
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'inherit-org' } })).body;
    const p = makeProject(d, { orgId: org.id });
    const u = await makeUser(d);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: u.token })).status).toBe(404);
    await d.api('POST', `/v1/orgs/${org.id}/members`, { token: admin, body: { email: u.email, role: 'admin' } });
    const seen = await d.api('GET', `/v1/projects/${p.id}`, { token: u.token });
    expect(seen.body).toMatchObject({ your_role: 'admin', your_metadata_role: 'admin' });
    expect(d.db.prepare('SELECT COUNT(*) AS n FROM acct_project_members WHERE project_id = ?').get(p.id)).toEqual({ n: 0 });
    // A second admin so the first can be demoted, then demotion is effective at once.
    const v = await makeUser(d);
    await d.api('POST', `/v1/orgs/${org.id}/members`, { token: admin, body: { email: v.email, role: 'admin' } });
    const patch = await d.api('PATCH', `/v1/orgs/${org.id}/members/${u.id}`, { token: admin, body: { role: 'member' } });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ member: { user_id: u.id, role: 'member' }, note: expect.stringMatching(/no longer inherits/) });
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: u.token })).status).toBe(404);
  });

  it('patch and remove: 409 for the only org admin, 404 for non-members, audited', async () => {
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'solo-org' } })).body;
    const u = await makeUser(d);
    const m = await makeUser(d);
    await d.api('POST', `/v1/orgs/${org.id}/members`, { token: admin, body: { email: u.email, role: 'admin' } });
    await d.api('POST', `/v1/orgs/${org.id}/members`, { token: admin, body: { email: m.email } });
    const demote = await d.api('PATCH', `/v1/orgs/${org.id}/members/${u.id}`, { token: admin, body: { role: 'member' } });
    expect(demote.status).toBe(409);
    expect(demote.body.error).toMatch(/only admin/);
    const remove = await d.api('DELETE', `/v1/orgs/${org.id}/members/${u.id}`, { token: admin });
    expect(remove.status).toBe(409);
    const rm = await d.api('DELETE', `/v1/orgs/${org.id}/members/${m.email}`, { token: admin });
    expect(rm.status).toBe(200);
    expect(rm.body).toMatchObject({ deleted: true, user_id: m.id, note: expect.any(String) });
    expect((await d.api('DELETE', `/v1/orgs/${org.id}/members/${m.id}`, { token: admin })).status).toBe(404);
    expect((await d.api('PATCH', `/v1/orgs/${org.id}/members/${m.id}`, { token: admin, body: { role: 'admin' } })).status).toBe(404);
    expect((await d.api('PATCH', `/v1/orgs/${org.id}/members/${u.id}`, { token: admin, body: {} })).status).toBe(400);
    expect(auditCount('org.member.add')).toBeGreaterThan(0);
    expect(auditCount('org.member.remove')).toBeGreaterThan(0);
    expect(auditCount('org.member.update')).toBeGreaterThan(0);
  });

  it('pages org members', async () => {
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'paged-org' } })).body;
    for (let i = 0; i < 3; i++) {
      const u = await makeUser(d);
      await d.api('POST', `/v1/orgs/${org.id}/members`, { token: admin, body: { email: u.email } });
    }
    const p1 = await d.api('GET', `/v1/orgs/${org.id}/members?page_size=2`, { token: admin });
    expect(p1.body.members).toHaveLength(2);
    const p2 = await d.api('GET', `/v1/orgs/${org.id}/members?page_size=2&page_token=${p1.body.next_page_token}`, { token: admin });
    expect(p2.body.members).toHaveLength(1);
    expect(p2.body.next_page_token).toBeUndefined();
    // A token from another org's member list is refused.
    const other = await d.api('GET', `/v1/orgs/${defaultOrg()}/members?page_token=${p1.body.next_page_token}`, { token: admin });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('page_token was issued for a different list');
    const def = await d.api('GET', `/v1/orgs/${defaultOrg()}/members?page_size=200`, { token: admin });
    expect(def.body.members.find((m: { email: string }) => m.email === ADMIN_EMAIL)).toMatchObject({ role: 'admin' });
  });
});
