import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeUser } from '../helpers/fixtures.js';

/**
 * Issue 17 §1-2: a platform admin holds metadata authority everywhere and resource authority
 * nowhere; the only way into contents is break-glass, and credentials made under it die with it.
 */
const clock = new ManualClock();
let d: TestDaemon;
let orgId: string;
beforeAll(async () => {
  d = await startTestDaemon({}, { clock });
  const org = await d.api('POST', '/v1/orgs', { token: await d.adminToken(), body: { slug: 'tenant' } });
  expect(org.status, org.text).toBe(201);
  orgId = org.body.id;
});
afterAll(() => d?.close());

/** A project of another org with its own admin and a secret; a platform admin with no grant. */
async function scene() {
  const project = makeProject(d, { orgId });
  const owner = await makeUser(d, { orgId });
  grant(d, project.id, owner.id, 'admin');
  const pa = await makeUser(d, { platformAdmin: true, orgId });
  const put = await d.api('POST', `/v1/projects/${project.id}/secrets`, { token: owner.token, body: { name: 'db-password', value: 'hunter2-very-secret' } });
  expect(put.status, put.text).toBe(201);
  const reveal = () => d.api('POST', `/v1/projects/${project.id}/secrets/db-password:reveal`, { token: pa.token, body: { reason: 'checking access' } });
  return { project, owner, pa, reveal };
}

const auditOf = async (projectId: string, token: string) =>
  (await d.api('GET', `/v1/projects/${projectId}/audit?page_size=200`, { token })).body.entries as { action: string; actor: string; target: string; details: any }[];

describe('the platform admin cannot grant itself contents (spec 1 §5, §4.7)', () => {
  it('POST members naming itself: 403 pointing to break-glass; reveal stays closed', async () => {
    const { project, pa, reveal } = await scene();
    expect((await reveal()).status).toBe(403);
    const r = await d.api('POST', `/v1/projects/${project.id}/members`, { token: pa.token, body: { email: pa.email, role: 'admin' } });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/break-glass/);
    expect(r.body.request_id).toBeTruthy();
    const member = await d.api('POST', `/v1/projects/${project.id}/members`, { token: pa.token, body: { email: pa.email, role: 'member' } });
    expect(member.status).toBe(403);
    expect((await reveal()).status).toBe(403);
    expect((await d.api('GET', `/v1/projects/${project.id}/secrets`, { token: pa.token })).status).toBe(403);
  });

  it('POST invitations to its own e-mail: 403; nothing granted', async () => {
    const { project, pa, owner, reveal } = await scene();
    const r = await d.api('POST', `/v1/projects/${project.id}/invitations`, { token: pa.token, body: { email: pa.email.toUpperCase(), role: 'admin' } });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/break-glass/);
    expect((await reveal()).status).toBe(403);
    const members = await d.api('GET', `/v1/projects/${project.id}/members`, { token: owner.token });
    expect(members.body.members.map((m: any) => m.email)).not.toContain(pa.email);
  });

  it('POST and PATCH org members naming itself admin: 403; org membership unchanged', async () => {
    const { pa, reveal } = await scene();
    const add = await d.api('POST', `/v1/orgs/${orgId}/members`, { token: pa.token, body: { email: pa.email, role: 'admin' } });
    expect(add.status).toBe(403);
    expect(add.body.error).toMatch(/break-glass/);
    expect((await reveal()).status).toBe(403);
    // Plain org membership opens nothing, so joining as member is allowed; promoting it is the self-grant.
    expect((await d.api('POST', `/v1/orgs/${orgId}/members`, { token: pa.token, body: { email: pa.email, role: 'member' } })).status).toBe(201);
    const patch = await d.api('PATCH', `/v1/orgs/${orgId}/members/${pa.id}`, { token: pa.token, body: { role: 'admin' } });
    expect(patch.status).toBe(403);
    expect(patch.body.error).toMatch(/break-glass/);
    const list = await d.api('GET', `/v1/orgs/${orgId}/members?page_size=200`, { token: pa.token });
    expect(list.body.members.find((m: any) => m.email === pa.email)?.role).not.toBe('admin');
    expect((await reveal()).status).toBe(403);
  });

  it('PATCH promoting its own member grant to admin is refused too', async () => {
    const { project, pa } = await scene();
    grant(d, project.id, pa.id, 'member');
    const r = await d.api('PATCH', `/v1/projects/${project.id}/members/${pa.id}`, { token: pa.token, body: { role: 'admin' } });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/break-glass/);
  });

  it('grants to other accounts stay allowed and land in the audit log of every project they open', async () => {
    const { project, pa, owner } = await scene();
    const other = await makeUser(d, { orgId });
    const add = await d.api('POST', `/v1/projects/${project.id}/members`, { token: pa.token, body: { email: other.email, role: 'member' } });
    expect(add.status, add.text).toBe(201);
    const second = makeProject(d, { orgId });
    const orgAdmin = await d.api('POST', `/v1/orgs/${orgId}/members`, { token: pa.token, body: { email: (await makeUser(d)).email, role: 'admin' } });
    expect(orgAdmin.status, orgAdmin.text).toBe(201);
    const seen = await auditOf(project.id, owner.token);
    expect(seen).toContainEqual(expect.objectContaining({ action: 'member.add', actor: pa.email, target: other.email }));
    // The org admin grant carries no project, so a row goes into each project of the org.
    const orgRow = expect.objectContaining({ action: 'org.member.add', actor: pa.email, target: orgAdmin.body.member.email });
    expect(seen).toContainEqual(orgRow);
    expect(await auditOf(second.id, pa.token)).toContainEqual(orgRow);
  });

  it('break-glass still opens contents, visibly', async () => {
    const { project, pa, owner, reveal } = await scene();
    const bg = await d.api('POST', `/v1/projects/${project.id}/break-glass`, { token: pa.token, body: { reason: 'INC-4711: database outage', minutes: 30 } });
    expect(bg.status, bg.text).toBe(201);
    expect((await reveal()).status).toBe(200);
    const members = await d.api('GET', `/v1/projects/${project.id}/members`, { token: owner.token });
    expect(members.body.members).toContainEqual(expect.objectContaining({ email: pa.email, break_glass: true, reason: 'INC-4711: database outage' }));
  });
});

describe('credentials made under break-glass die with the grant', () => {
  async function keyUnderBreakGlass(minutes = 30) {
    const s = await scene();
    const bg = await d.api('POST', `/v1/projects/${s.project.id}/break-glass`, { token: s.pa.token, body: { reason: 'INC-4712: key rotation', minutes } });
    expect(bg.status, bg.text).toBe(201);
    const sa = await d.api('POST', `/v1/projects/${s.project.id}/service-accounts`, { token: s.pa.token, body: { name: `bg-${Math.random().toString(36).slice(2, 8)}`, role: 'admin' } });
    expect(sa.status, sa.text).toBe(201);
    const key = await d.api('POST', `/v1/projects/${s.project.id}/service-accounts/${sa.body.service_account.name}/keys`, {
      token: s.pa.token,
      body: { display_name: 'ops', expires_in_days: 30 },
    });
    expect(key.status, key.text).toBe(201);
    expect(key.body.note).toMatch(/break-glass/);
    // The key's expiry is the grant's, not the 30 days asked for.
    expect(key.body.key.expires_at).toBe(bg.body.grant.expires_at);
    const revealWith = (token: string) => d.api('POST', `/v1/projects/${s.project.id}/secrets/db-password:reveal`, { token, body: { reason: 'rotation' } });
    expect((await revealWith(key.body.secret)).status).toBe(200);
    return { ...s, sa: sa.body.service_account, key: key.body, revealWith };
  }

  it('a key minted under break-glass is refused once the grant is removed (DELETE on the member)', async () => {
    const s = await keyUnderBreakGlass();
    const end = await d.api('DELETE', `/v1/projects/${s.project.id}/members/${s.pa.id}`, { token: s.owner.token });
    expect(end.status, end.text).toBe(200);
    const after = await s.revealWith(s.key.secret);
    expect(after.status).toBe(401);
    expect((await d.api('GET', '/v1/auth/me', { token: s.key.secret })).status).toBe(401);
    // The project's admins see the key revoked, and why.
    const keys = await d.api('GET', `/v1/projects/${s.project.id}/service-accounts/${s.sa.name}/keys`, { token: s.owner.token });
    expect(keys.body.keys[0]).toMatchObject({ key_id: s.key.key.key_id, state: 'revoked' });
    const revoke = (await auditOf(s.project.id, s.owner.token)).find((e) => e.action === 'break_glass.revoke');
    expect(revoke?.details.revoked_keys).toEqual([s.key.key.key_id]);
  });

  it('a key minted under break-glass stops when the grant expires on its own', async () => {
    const s = await keyUnderBreakGlass(5);
    clock.advance(5 * 60_000 + 1000);
    expect((await s.revealWith(s.key.secret)).status).toBe(401);
  });

  it('a key minted by the project admin is not bound to anyone\'s grant', async () => {
    const s = await scene();
    const sa = await d.api('POST', `/v1/projects/${s.project.id}/service-accounts`, { token: s.owner.token, body: { name: 'ci', role: 'admin' } });
    expect(sa.status).toBe(201);
    const key = await d.api('POST', `/v1/projects/${s.project.id}/service-accounts/ci/keys`, { token: s.owner.token, body: { display_name: 'ci' } });
    expect(key.body.key.expires_at).toBeUndefined();
    expect(key.body.note).not.toMatch(/break-glass/);
  });
});
