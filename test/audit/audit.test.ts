import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAudit } from '../../src/daemon/audit.js';
import { createWorkloadKey } from '../../src/daemon/services/auth/keys.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon();
});
afterAll(() => d.close());

const seed = (projectId: string, n: number, from = 0) => {
  for (let i = from; i < from + n; i++) writeAudit(d.db, d.app.ctx.clock, { projectId, actor: 'seed@example.test', action: 'test.seed', target: `t${i}`, details: { i } });
};

describe('GET /v1/projects/{id}/audit', () => {
  it('rows carry id, ts, actor, action, target, details, request_id; newest first', async () => {
    const c = await cast(d);
    const r1 = await d.api('POST', `/v1/projects/${c.project.id}/service-accounts`, { token: c.admin.token, body: { name: 'first' } });
    const r2 = await d.api('POST', `/v1/projects/${c.project.id}/invitations`, { token: c.admin.token, body: { email: 'inv@example.test' } });
    const r = await d.api('GET', `/v1/projects/${c.project.id}/audit`, { token: c.member.token });
    expect(r.status).toBe(200);
    expect(r.body.next_page_token).toBeUndefined();
    expect(r.body.entries).toHaveLength(2);
    const [newest, older] = r.body.entries;
    expect(Object.keys(newest).sort()).toEqual(['action', 'actor', 'details', 'id', 'request_id', 'target', 'ts']);
    expect(newest).toMatchObject({ action: 'invitation.create', actor: c.admin.email, target: 'inv@example.test', request_id: r2.headers.get('x-request-id') });
    expect(newest.details).toMatchObject({ role: 'member', invitation_id: expect.any(String) });
    expect(older).toMatchObject({ action: 'service_account.create', request_id: r1.headers.get('x-request-id') });
    expect(Date.parse(newest.ts)).toBeGreaterThanOrEqual(Date.parse(older.ts));
    expect(newest.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('any project member (people and service-account keys) and a platform admin read it; outsiders 404; workload keys 403; anonymous 401', async () => {
    const c = await cast(d);
    const path = `/v1/projects/${c.project.id}/audit`;
    for (const t of [c.admin.token, c.member.token, c.sa.token, c.platformAdmin.token]) expect((await d.api('GET', path, { token: t })).status).toBe(200);
    const out = await d.api('GET', path, { token: c.outsider.token });
    expect(out.status).toBe(404);
    expect(out.body.error).toBe('project not found');
    const other = await cast(d);
    expect((await d.api('GET', path, { token: other.sa.token })).status).toBe(404);
    const wl = createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'agent-one');
    expect((await d.api('GET', path, { token: wl })).status).toBe(403);
    expect((await d.api('GET', path)).status).toBe(401);
  });

  it('only the project’s own rows are listed', async () => {
    const a = await cast(d);
    const b = await cast(d);
    seed(a.project.id, 3);
    seed(b.project.id, 2);
    writeAudit(d.db, d.app.ctx.clock, { actor: 'x', action: 'platform.thing' });
    expect((await d.api('GET', `/v1/projects/${a.project.id}/audit`, { token: a.admin.token })).body.entries).toHaveLength(3);
    expect((await d.api('GET', `/v1/projects/${b.project.id}/audit`, { token: b.admin.token })).body.entries).toHaveLength(2);
  });

  it('paging is stable while rows are appended: no repeats, no skips, new rows wait for a fresh first page', async () => {
    const c = await cast(d);
    seed(c.project.id, 7);
    const path = `/v1/projects/${c.project.id}/audit`;
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await d.api('GET', `${path}?page_size=3${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, { token: c.admin.token });
      expect(r.status).toBe(200);
      seen.push(...r.body.entries.map((e: any) => e.target));
      token = r.body.next_page_token;
      if (pages++ === 0) seed(c.project.id, 4, 100); // appended between pages
    } while (token);
    expect(seen).toEqual(['t6', 't5', 't4', 't3', 't2', 't1', 't0']);
    const fresh = await d.api('GET', `${path}?limit=4`, { token: c.admin.token });
    expect(fresh.body.entries.map((e: any) => e.target)).toEqual(['t103', 't102', 't101', 't100']);
  });

  it('page tokens: tampered 400, another project 400, another list 400, bad page_size 400', async () => {
    const a = await cast(d);
    const b = await cast(d);
    seed(a.project.id, 3);
    seed(b.project.id, 3);
    const t = (await d.api('GET', `/v1/projects/${a.project.id}/audit?page_size=1`, { token: a.admin.token })).body.next_page_token as string;
    expect(t).toBeTruthy();
    const tampered = await d.api('GET', `/v1/projects/${a.project.id}/audit?page_token=${encodeURIComponent(t.slice(0, -3) + 'abc')}`, { token: a.admin.token });
    expect(tampered.status).toBe(400);
    expect(tampered.body.error).toBe('page_token is invalid');
    // A forged anchor (payload changed, signature kept) is caught by the signature.
    const [body, mac] = t.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    payload.l = payload.l.replace(/@\d+$/, '@999999');
    const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    expect((await d.api('GET', `/v1/projects/${a.project.id}/audit?page_token=${forged}`, { token: a.admin.token })).body.error).toBe('page_token is invalid');
    const foreign = await d.api('GET', `/v1/projects/${b.project.id}/audit?page_token=${encodeURIComponent(t)}`, { token: b.admin.token });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('page_token was issued for a different list');
    const otherList = await d.api('GET', `/v1/projects/${a.project.id}/invitations?page_token=${encodeURIComponent(t)}`, { token: a.admin.token });
    expect(otherList.status).toBe(400);
    expect(otherList.body.error).toBe('page_token was issued for a different list');
    expect((await d.api('GET', `/v1/projects/${a.project.id}/audit?page_size=500`, { token: a.admin.token })).body.error).toBe('page_size must be between 1 and 200');
    expect((await d.api('GET', `/v1/projects/${a.project.id}/audit?page_token=garbage`, { token: a.admin.token })).status).toBe(400);
  });
});
