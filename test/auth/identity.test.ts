import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkloadKey, revokeWorkloadKeys } from '../../src/daemon/services/auth/keys.js';
import { ADMIN_EMAIL, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon();
});
afterAll(() => d.close());

describe('GET /v1/auth/me identity shapes (spec 1 §2.3a)', () => {
  it('a signed-in person: email, role, must_change_password, expires_at and no project fields', async () => {
    const r = await d.api('GET', '/v1/auth/me', { token: await d.adminToken() });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['email', 'expires_at', 'must_change_password', 'role']);
    expect(r.body).toMatchObject({ email: ADMIN_EMAIL, role: 'admin', must_change_password: false });
  });

  it('the platform role is re-read from the store, not taken from the token', async () => {
    const c = await cast(d);
    d.db.prepare(`UPDATE acct_users SET role = 'admin' WHERE id = ?`).run(c.member.id);
    expect((await d.api('GET', '/v1/auth/me', { token: c.member.token })).body.role).toBe('admin');
    d.db.prepare(`UPDATE acct_users SET role = 'user' WHERE id = ?`).run(c.member.id);
    expect((await d.api('GET', '/v1/auth/me', { token: c.member.token })).body.role).toBe('user');
  });

  it('a service-account key: derived e-mail and its one project', async () => {
    const c = await cast(d);
    const r = await d.api('GET', '/v1/auth/me', { token: c.sa.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      email: `${c.sa.name}@${c.project.short}.iam.platform.internal`,
      role: 'user',
      must_change_password: false,
      project_id: c.project.id,
      project_slug: c.project.slug,
      project_short: c.project.short,
    });
  });
});

describe('workload keys (svc_wl_)', () => {
  it('resolve to their project through GET /v1/auth/me', async () => {
    const c = await cast(d);
    const key = createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'summarizer');
    expect(key).toMatch(/^svc_wl_[a-z0-9]{12}_[A-Za-z0-9]{40}$/);
    const r = await d.api('GET', '/v1/auth/me', { token: key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      email: `summarizer@${c.project.short}.workloads.iam.platform.internal`,
      role: 'user',
      must_change_password: false,
      project_id: c.project.id,
      project_slug: c.project.slug,
      project_short: c.project.short,
    });
  });

  it('are refused with 403 on management routes that need a person, and 404 on other projects', async () => {
    const c = await cast(d);
    const key = createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'worker');
    const p = `/v1/projects/${c.project.id}`;
    const refused: Array<[string, string, unknown?]> = [
      ['GET', '/v1/projects'],
      ['GET', '/v1/users/me/keys'],
      ['POST', '/v1/users/me/keys', { display_name: 'x' }],
      ['POST', '/v1/auth/change-password', { current_password: 'a', new_password: 'b' }],
      ['POST', `${p}/invitations`, { email: 'x@example.test' }],
      ['GET', `${p}/invitations`],
      ['POST', `${p}/service-accounts`, { name: 'wl-made' }],
      ['GET', `${p}/service-accounts`],
      ['POST', `${p}/service-accounts/${c.sa.name}/keys`, { display_name: 'x' }],
      ['DELETE', `${p}/service-accounts/${c.sa.name}`],
      ['GET', `${p}/audit`],
    ];
    for (const [m, path, body] of refused) {
      const r = await d.api(m, path, { token: key, body });
      expect(r.status, `${m} ${path}`).toBe(403);
    }
    const other = await cast(d);
    expect((await d.api('GET', `/v1/projects/${other.project.id}/service-accounts`, { token: key })).status).toBe(404);
    expect(d.db.prepare(`SELECT 1 FROM acct_service_accounts WHERE name = 'wl-made'`).get()).toBeUndefined();
  });

  it('a workload key with the wrong prefix or revoked is no credential', async () => {
    const c = await cast(d);
    const key = createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'gone');
    expect((await d.api('GET', '/v1/auth/me', { token: key.replace('svc_wl_', 'svc_') })).status).toBe(401);
    revokeWorkloadKeys(d.db, d.app.ctx.clock, c.project.id, 'gone');
    expect((await d.api('GET', '/v1/auth/me', { token: key })).status).toBe(401);
  });
});
