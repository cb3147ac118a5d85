import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeUser } from '../helpers/fixtures.js';

/** Issue 17 §5: password length in characters (code points), and the last admin of a project. */
let d: TestDaemon;
let admin: string;
let orgId: string;
beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.adminToken();
  // An org without org admins: the project grants are the only real admins.
  orgId = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'no-org-admins' } })).body.id;
});
afterAll(() => d?.close());

// Seven characters (five keys, "A", "a"): twelve UTF-16 units, which the old check counted.
const EMOJI_PASSWORD = '🔑🔑🔑🔑🔑Aa';

describe('password length counts characters, not UTF-16 units', () => {
  it('user create refuses seven emoji-and-letter characters', async () => {
    expect(EMOJI_PASSWORD.length).toBe(12);
    const r = await d.api('POST', '/v1/users', { token: admin, body: { email: 'emoji@example.test', password: EMOJI_PASSWORD } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('password must be at least 12 characters');
  });

  it('change-password refuses it too, and twelve characters with emoji pass', async () => {
    const u = await makeUser(d);
    const r = await d.api('POST', '/v1/auth/change-password', { token: u.token, body: { current_password: 'Fixture-Password-1', new_password: EMOJI_PASSWORD } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('password must be at least 12 characters');
    const ok = await d.api('POST', '/v1/auth/change-password', { token: u.token, body: { current_password: 'Fixture-Password-1', new_password: '🔑🔑🔑🔑🔑Aa-secure' } });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('deleting the last human admin of a project (spec 1 §4.6 rule, applied to DELETE /v1/users)', () => {
  it('is refused with 409 naming the projects; nothing is deleted', async () => {
    const owner = await makeUser(d);
    const a = makeProject(d, { slug: 'only-admin-a', orgId });
    const b = makeProject(d, { slug: 'only-admin-b', orgId });
    const shared = makeProject(d, { slug: 'two-admins', orgId });
    grant(d, a.id, owner.id, 'admin');
    grant(d, b.id, owner.id, 'admin');
    grant(d, shared.id, owner.id, 'admin');
    grant(d, shared.id, (await makeUser(d)).id, 'admin');
    const r = await d.api('DELETE', `/v1/users/${owner.email}`, { token: admin });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/last admin of projects only-admin-a, only-admin-b/);
    expect(r.body.error).not.toMatch(/two-admins/);
    expect(r.body.projects).toEqual(['only-admin-a', 'only-admin-b']);
    // Removing that member would be refused the same way.
    const remove = await d.api('DELETE', `/v1/projects/${a.id}/members/${owner.id}`, { token: admin });
    expect(remove.status).toBe(409);
    const users = await d.api('GET', '/v1/users?page_size=200', { token: admin });
    expect(users.body.users.map((u: any) => u.email)).toContain(owner.email);
  });

  it('a break-glass or service-account admin does not count as another admin; a second human admin does', async () => {
    const owner = await makeUser(d);
    const p = makeProject(d, { slug: 'guarded', orgId });
    grant(d, p.id, owner.id, 'admin');
    const pa = await makeUser(d, { platformAdmin: true, orgId: (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'elsewhere' } })).body.id });
    // The platform admin's home org is another one, so it holds no grant and may break glass.
    expect((await d.api('POST', `/v1/projects/${p.id}/break-glass`, { token: pa.token, body: { reason: 'INC-9: incident drill' } })).status).toBe(201);
    expect((await d.api('POST', `/v1/projects/${p.id}/service-accounts`, { token: owner.token, body: { name: 'robot', role: 'admin' } })).status).toBe(201);
    const refused = await d.api('DELETE', `/v1/users/${owner.email}`, { token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body.projects).toEqual(['guarded']);
    const second = await makeUser(d);
    expect((await d.api('POST', `/v1/projects/${p.id}/members`, { token: owner.token, body: { email: second.email, role: 'admin' } })).status).toBe(201);
    const ok = await d.api('DELETE', `/v1/users/${owner.email}`, { token: admin });
    expect(ok.status, ok.text).toBe(200);
  });
});
