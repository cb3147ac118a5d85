import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeServiceAccountKey, makeUser } from '../helpers/fixtures.js';

/**
 * Who gets what on every route of this area, on one project in its own organization. Columns:
 * platform admin without grants (metadata only), org admin of the project's org, project admin,
 * member, outsider, member service-account key, anonymous. Calls are chosen not to change state
 * (same-role writes, unknown targets), so one cast serves the whole table; a 404 that passed the
 * gate is told apart from the 404 of the 404-not-403 rule by its message.
 */
type Role = 'pa' | 'orgAdmin' | 'admin' | 'member' | 'outsider' | 'sa' | 'anon';
const ROLES: Role[] = ['pa', 'orgAdmin', 'admin', 'member', 'outsider', 'sa', 'anon'];

let d: TestDaemon;
let tokens: Record<Role, string | undefined>;
let ids: { project: string; org: string; member: string; memberEmail: string; sa: string; stranger: string };
let dependents: (id: string) => string | undefined;

beforeAll(async () => {
  d = await startTestDaemon();
  const root = await d.adminToken();
  const org = (await d.api('POST', '/v1/orgs', { token: root, body: { slug: 'matrix-org' } })).body.id as string;
  const p = makeProject(d, { orgId: org });
  const [pa, orgAdmin, admin, member, outsider, stranger] = await Promise.all([
    makeUser(d, { platformAdmin: true }),
    makeUser(d),
    makeUser(d),
    makeUser(d),
    makeUser(d),
    makeUser(d),
  ]);
  await d.api('POST', `/v1/orgs/${org}/members`, { token: root, body: { email: orgAdmin.email, role: 'admin' } });
  grant(d, p.id, admin.id, 'admin');
  grant(d, p.id, member.id, 'member');
  const sa = makeServiceAccountKey(d, p.id, 'member');
  tokens = { pa: pa.token, orgAdmin: orgAdmin.token, admin: admin.token, member: member.token, outsider: outsider.token, sa: sa.token, anon: undefined };
  ids = { project: p.id, org, member: member.id, memberEmail: member.email, sa: sa.serviceAccountId, stranger: stranger.id };
  // Project delete is checked against a blocking dependent so that no caller actually deletes it.
  dependents = (id) => (id === p.id ? '1 agent' : undefined);
  d.app.ctx.hooks.projectDependents.push(dependents);
});
afterAll(() => d.close());

const P = () => `/v1/projects/${ids.project}`;
// Expected status per role, in ROLES order; "404g" = 404 after passing the gate (target not found).
const table: [string, string, () => string, () => unknown, (number | '404g')[]][] = [
  ['get project', 'GET', P, () => undefined, [200, 200, 200, 200, 404, 200, 401]],
  ['rename (no-op)', 'PATCH', P, () => ({}), [200, 200, 200, 403, 404, 403, 401]],
  ['delete (blocked by agents)', 'DELETE', P, () => undefined, [409, 409, 409, 403, 404, 403, 401]],
  ['quota', 'GET', () => `${P()}/quota`, () => undefined, [200, 200, 200, 200, 404, 200, 401]],
  ['members list', 'GET', () => `${P()}/members`, () => undefined, [200, 200, 200, 200, 404, 200, 401]],
  ['members add (same role)', 'POST', () => `${P()}/members`, () => ({ email: ids.memberEmail }), [200, 200, 200, 403, 404, 403, 401]],
  ['members update (same role)', 'PATCH', () => `${P()}/members/${ids.member}`, () => ({ role: 'member' }), [200, 200, 200, 403, 404, 403, 401]],
  ['members remove (not a member)', 'DELETE', () => `${P()}/members/${ids.stranger}`, () => undefined, ['404g', '404g', '404g', 403, 404, 403, 401]],
  ['sa member update (same role)', 'PATCH', () => `${P()}/members/service-accounts/${ids.sa}`, () => ({ role: 'member' }), [200, 200, 200, 403, 404, 403, 401]],
  ['sa member remove (unknown)', 'DELETE', () => `${P()}/members/service-accounts/nope`, () => undefined, ['404g', '404g', '404g', 403, 404, 403, 401]],
  ['break-glass (over 24 h)', 'POST', () => `${P()}/break-glass`, () => ({ reason: 'matrix reason text', minutes: 1441 }), [400, 403, 403, 403, 404, 403, 401]],
  ['users list', 'GET', () => '/v1/users', () => undefined, [200, 403, 403, 403, 403, 403, 401]],
  ['users create (exists, in the project org)', 'POST', () => '/v1/users', () => ({ email: ids.memberEmail, org_id: ids.org }), [409, 409, 403, 403, 403, 403, 401]],
  ['users reset-password (unknown)', 'POST', () => '/v1/users/ghost@example.test/reset-password', () => undefined, ['404g', 403, 403, 403, 403, 403, 401]],
  ['orgs list', 'GET', () => '/v1/orgs', () => undefined, [200, 403, 403, 403, 403, 403, 401]],
  ['org members list', 'GET', () => `/v1/orgs/${ids.org}/members`, () => undefined, [200, 403, 403, 403, 403, 403, 401]],
  ['platform limits', 'GET', () => '/v1/platform/limits', () => undefined, [200, 200, 200, 200, 200, 200, 401]],
];

describe('role matrix of the account routes', () => {
  for (const [label, method, path, body, expected] of table) {
    it(label, async () => {
      const got: (number | '404g')[] = [];
      for (const role of ROLES) {
        const r = await d.api(method, path(), { token: tokens[role], body: body() });
        const gated404 = r.status === 404 && !/^project not found$/.test(r.body.error);
        got.push(gated404 ? '404g' : r.status);
      }
      expect(Object.fromEntries(ROLES.map((r, i) => [r, got[i]]))).toEqual(Object.fromEntries(ROLES.map((r, i) => [r, expected[i]])));
    });
  }

  it('nothing above changed the project', async () => {
    const p = (await d.api('GET', P(), { token: tokens.admin })).body;
    expect(p.id).toBe(ids.project);
    const members = (await d.api('GET', `${P()}/members`, { token: tokens.admin })).body.members;
    expect(members.filter((m: { break_glass?: boolean }) => m.break_glass)).toEqual([]);
  });
});
