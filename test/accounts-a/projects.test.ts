import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, grant, makeProject, makeUser } from '../helpers/fixtures.js';
import { DEFAULT_QUOTAS } from '../../src/daemon/services/accounts/quotas.js';
import { createWorkloadKey } from '../../src/daemon/services/auth/keys.js';

let d: TestDaemon;
let admin: string;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.adminToken();
  c = await cast(d);
});
afterAll(() => d.close());

const audit = (action: string, projectId: string) =>
  d.db.prepare('SELECT * FROM acct_audit WHERE action = ? AND project_id = ?').all(action, projectId) as { actor: string; details: string }[];
const rowsOf = (projectId: string) =>
  d.db.prepare('SELECT user_id, role FROM acct_project_members WHERE project_id = ?').all(projectId) as { user_id: string; role: string }[];

describe('POST /v1/projects', () => {
  it('an org admin creates in their org: immutable random short, quota rows, admin by inheritance (no row)', async () => {
    const r = await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'Shop-API', name: 'Shop API' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.project).toMatchObject({ slug: 'shop-api', name: 'Shop API', your_role: 'admin', your_metadata_role: 'admin' });
    expect(r.body.project.short).toMatch(/^[a-z][a-z0-9]{5}$/);
    expect(r.body.note).toMatch(/org admin/);
    expect(rowsOf(r.body.project.id)).toEqual([]);
    const quotas = d.db.prepare('SELECT resource, value FROM acct_project_quotas WHERE project_id = ?').all(r.body.project.id);
    expect(quotas).toHaveLength(DEFAULT_QUOTAS.length);
    expect(audit('project.create', r.body.project.id)).toHaveLength(1);
    // Shorts differ per project.
    const r2 = await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'shop-web' } });
    expect(r2.body.project.short).not.toBe(r.body.project.short);
    expect(r2.body.project.name).toBe('shop-web');
  });

  it('a platform admin creating outside their own org is not made a member, and the note says so', async () => {
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'outside' } })).body;
    const r = await d.api('POST', '/v1/projects', { token: c.platformAdmin.token, body: { slug: 'outside-proj', org_id: org.id } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.note).toMatch(/not made a member/);
    expect(r.body.project.your_role).toBeUndefined();
    expect(r.body.project.your_metadata_role).toBe('admin');
    expect(rowsOf(r.body.project.id)).toEqual([]);
    // Inside their own org (where they are not org admin) they become a direct admin.
    const own = await d.api('POST', '/v1/projects', { token: c.platformAdmin.token, body: { slug: 'pa-own' } });
    expect(own.status).toBe(201);
    expect(own.body.project.your_role).toBe('admin');
    expect(rowsOf(own.body.project.id)).toEqual([{ user_id: expect.any(String), role: 'admin' }]);
  });

  it('403 without org admin (project admins, members), 403 no home organization, 403 machine keys, 401 anonymous', async () => {
    for (const t of [c.admin.token, c.member.token, c.outsider.token]) {
      const r = await d.api('POST', '/v1/projects', { token: t, body: { slug: 'nope' } });
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('creating a project requires the admin role on its organization');
    }
    const external = await makeUser(d);
    d.db.prepare('UPDATE acct_users SET org_id = NULL WHERE id = ?').run(external.id);
    d.db.prepare('DELETE FROM acct_org_members WHERE user_id = ?').run(external.id);
    const noHome = await d.api('POST', '/v1/projects', { token: external.token, body: { slug: 'nope' } });
    expect(noHome.status).toBe(403);
    expect(noHome.body.error).toMatch(/no home organization/);
    expect((await d.api('POST', '/v1/projects', { token: c.sa.token, body: { slug: 'nope' } })).status).toBe(403);
    expect((await d.api('POST', '/v1/projects', { body: { slug: 'nope' } })).status).toBe(401);
  });

  it('400 bad org_id or slug, 409 slug conflict and reserved default', async () => {
    expect((await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'x1', org_id: 'nope' } })).body.error).toMatch(/org_id/);
    expect((await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'x1', org_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(400);
    expect((await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'Bad Slug' } })).status).toBe(400);
    expect((await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'a'.repeat(64) } })).status).toBe(400);
    expect((await d.api('POST', '/v1/projects', { token: admin, body: {} })).body.error).toBe('missing required field: slug');
    expect((await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'x1', owner: 'me' } })).body.error).toBe('unknown body field: owner');
    const dup = await d.api('POST', '/v1/projects', { token: admin, body: { slug: c.project.slug } });
    expect(dup.status).toBe(409);
    expect((await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'default' } })).status).toBe(409);
  });
});

describe('GET /v1/projects and GET /v1/projects/{id}', () => {
  it('lists sorted by slug: direct grants for members, everything for platform admins; refuses machine keys', async () => {
    const mine = await d.api('GET', '/v1/projects', { token: c.member.token });
    expect(mine.body.projects.map((p: { slug: string }) => p.slug)).toEqual([c.project.slug]);
    const all = (await d.api('GET', '/v1/projects?page_size=200', { token: c.platformAdmin.token })).body.projects;
    const slugs = all.map((p: { slug: string }) => p.slug);
    expect(slugs).toEqual([...slugs].sort());
    expect(slugs).toContain('default');
    expect((await d.api('GET', '/v1/projects', { token: c.sa.token })).status).toBe(403);
    expect((await d.api('GET', `/v1/projects/${c.project.slug}`, { token: c.member.token })).body.id).toBe(c.project.id);
    expect((await d.api('GET', `/v1/projects/${c.project.short}`, { token: c.member.token })).body.id).toBe(c.project.id);
  });

  it('org admins see every project of their org in the list, inherited live', async () => {
    const org = (await d.api('POST', '/v1/orgs', { token: admin, body: { slug: 'list-org' } })).body;
    const a = makeProject(d, { orgId: org.id, slug: 'list-b' });
    const b = makeProject(d, { orgId: org.id, slug: 'list-a' });
    const boss = await makeUser(d);
    expect((await d.api('GET', '/v1/projects', { token: boss.token })).body.projects).toEqual([]);
    await d.api('POST', `/v1/orgs/${org.id}/members`, { token: admin, body: { email: boss.email, role: 'admin' } });
    const list = (await d.api('GET', '/v1/projects', { token: boss.token })).body.projects;
    expect(list.map((p: { id: string }) => p.id)).toEqual([b.id, a.id]);
    expect(list[0]).toMatchObject({ your_role: 'admin', your_metadata_role: 'admin' });
  });
});

describe('PATCH /v1/projects/{id}', () => {
  it('renames slug and name; short never changes; no-op says nothing changed; audited', async () => {
    const p = makeProject(d);
    grant(d, p.id, c.admin.id, 'admin');
    const r = await d.api('PATCH', `/v1/projects/${p.id}`, { token: c.admin.token, body: { slug: `${p.slug}-renamed`, name: 'Renamed' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.project).toMatchObject({ id: p.id, slug: `${p.slug}-renamed`, name: 'Renamed', short: p.short });
    expect(r.body.note).toMatch(/short .* unchanged/);
    expect((await d.api('GET', `/v1/projects/${p.slug}-renamed`, { token: c.admin.token })).status).toBe(200);
    expect((await d.api('GET', `/v1/projects/${p.slug}`, { token: c.admin.token })).status).toBe(404);
    const noop = await d.api('PATCH', `/v1/projects/${p.id}`, { token: c.admin.token, body: { name: 'Renamed' } });
    expect(noop.status).toBe(200);
    expect(noop.body.note).toBe('nothing changed');
    expect(audit('project.update', p.id)).toHaveLength(1);
  });

  it('409 slug conflict, 409 default reserved (taking it, or renaming the default project), 400 bad slug', async () => {
    const p = makeProject(d);
    const other = makeProject(d);
    const conflict = await d.api('PATCH', `/v1/projects/${p.id}`, { token: admin, body: { slug: other.slug } });
    expect(conflict.status).toBe(409);
    const reserved = await d.api('PATCH', `/v1/projects/${p.id}`, { token: admin, body: { slug: 'default' } });
    expect(reserved.status).toBe(409);
    expect(reserved.body.error).toBe('slug default is reserved for the default project');
    const renameDefault = await d.api('PATCH', '/v1/projects/default', { token: admin, body: { slug: 'main' } });
    expect(renameDefault.status).toBe(409);
    expect((await d.api('PATCH', '/v1/projects/default', { token: admin, body: { name: 'Local default' } })).status).toBe(200);
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { token: admin, body: { slug: '-bad' } })).status).toBe(400);
  });

  it('role matrix: metadata admins may (project admin, org admin, platform admin without grant); member 403; outsider 404; sa key 403', async () => {
    const p = c.project;
    const body = { name: 'Matrix' };
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { token: c.admin.token, body })).status).toBe(200);
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { token: admin, body })).status).toBe(200);
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { token: c.platformAdmin.token, body })).status).toBe(200);
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { token: c.member.token, body })).status).toBe(403);
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { token: c.outsider.token, body })).status).toBe(404);
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { token: c.sa.token, body })).status).toBe(403);
    expect((await d.api('PATCH', `/v1/projects/${p.id}`, { body })).status).toBe(401);
  });
});

describe('DELETE /v1/projects/{id}', () => {
  it('deletes with its grants and quota rows, audited; 404 afterwards', async () => {
    const p = makeProject(d);
    grant(d, p.id, c.admin.id, 'admin');
    const r = await d.api('DELETE', `/v1/projects/${p.id}`, { token: c.admin.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ deleted: true, project: { id: p.id, slug: p.slug } });
    expect(rowsOf(p.id)).toEqual([]);
    expect(d.db.prepare('SELECT COUNT(*) AS n FROM acct_project_quotas WHERE project_id = ?').get(p.id)).toEqual({ n: 0 });
    expect(audit('project.delete', p.id)).toHaveLength(1);
    expect((await d.api('GET', `/v1/projects/${p.id}`, { token: admin })).status).toBe(404);
  });

  it('deletes a project holding service accounts, keys, invitations and break-glass history (cascade, no 500)', async () => {
    const created = (await d.api('POST', '/v1/projects', { token: admin, body: { slug: 'full-of-things' } })).body.project;
    const sa = await d.api('POST', `/v1/projects/${created.id}/service-accounts`, { token: admin, body: { name: 'deployer' } });
    expect(sa.status, sa.text).toBe(201);
    const key = await d.api('POST', `/v1/projects/${created.id}/service-accounts/deployer/keys`, { token: admin, body: { display_name: 'ci' } });
    expect(key.status, key.text).toBe(201);
    const inv = await d.api('POST', `/v1/projects/${created.id}/invitations`, { token: admin, body: { email: 'newcomer@example.test' } });
    expect(inv.status, inv.text).toBe(201);
    await d.api('POST', `/v1/projects/${created.id}/break-glass`, { token: c.platformAdmin.token, body: { reason: 'look before delete' } });
    const r = await d.api('DELETE', `/v1/projects/${created.id}`, { token: admin });
    expect(r.status, r.text).toBe(200);
    expect((await d.api('GET', '/v1/auth/me', { token: key.body.secret })).status).toBe(401);
    for (const t of ['acct_service_accounts', 'acct_api_keys', 'acct_invitations', 'acct_project_members', 'acct_project_quotas']) {
      expect(d.db.prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE project_id = ?`).get(created.id), t).toEqual({ n: 0 });
    }
  });

  it('403 for the default project; 409 while an area reports agents; member 403; outsider 404', async () => {
    const def = await d.api('DELETE', '/v1/projects/default', { token: admin });
    expect(def.status).toBe(403);
    expect(def.body.error).toBe('the default project cannot be deleted');
    const p = makeProject(d);
    grant(d, p.id, c.member.id, 'member');
    const hook = (id: string) => (id === p.id ? '2 agents' : undefined);
    d.app.ctx.hooks.projectDependents.push(hook);
    try {
      const busy = await d.api('DELETE', `/v1/projects/${p.id}`, { token: admin });
      expect(busy.status).toBe(409);
      expect(busy.body.error).toBe(`project ${p.slug} still has 2 agents: delete them first`);
    } finally {
      d.app.ctx.hooks.projectDependents.pop();
    }
    expect((await d.api('DELETE', `/v1/projects/${p.id}`, { token: c.member.token })).status).toBe(403);
    expect((await d.api('DELETE', `/v1/projects/${p.id}`, { token: c.outsider.token })).status).toBe(404);
    expect((await d.api('DELETE', `/v1/projects/${p.id}`, { token: admin })).status).toBe(200);
  });
});

/** The areas that report live use of a resource (spec 1 §8.3: one count across areas). */
// Every area that runs instances reports them and what they reserve (CPU and memory, issue 25 §3).
const RUNNING = 'agents,cache,mcp,serverless';
const LIVE_SOURCES: Record<string, string> = { instances: RUNNING, services: 'agents,serverless', cpu_requests: RUNNING, memory_requests: RUNNING, cpu_limits: RUNNING, memory_limits: RUNNING };

describe('quota and platform limits', () => {
  it('GET /quota: caps written at creation with live use from the hooks; visible to members and the project key; 404 outsiders', async () => {
    const path = `/v1/projects/${c.project.id}/quota`;
    const r = await d.api('GET', path, { token: c.member.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ project_id: c.project.id, project_slug: expect.any(String) });
    const nothingFrom = (sources?: string) => Object.fromEntries((sources?.split(',') ?? []).map((s) => [s, 0]));
    expect(r.body.quotas).toEqual(
      DEFAULT_QUOTAS.map((q) => ({ resource: q.resource, unit: q.unit, limit: q.value, used: 0, source: LIVE_SOURCES[q.resource] ?? 'none', by_source: nothingFrom(LIVE_SOURCES[q.resource]) })),
    );
    const hook = (id: string) => ({ source: 'extra', used: id === c.project.id ? { instances: 3, cpu_limits: 4.5 } : {} });
    d.app.ctx.hooks.quotaUsage.push(hook);
    try {
      const live = (await d.api('GET', path, { token: c.sa.token })).body.quotas;
      expect(live.find((q: { resource: string }) => q.resource === 'instances')).toMatchObject({ used: 3, limit: 50, source: 'agents,cache,mcp,serverless,extra', by_source: { extra: 3, cache: 0 } });
      expect(live.find((q: { resource: string }) => q.resource === 'cpu_limits')).toMatchObject({ used: 4.5, limit: 20 });
      expect(live.find((q: { resource: string }) => q.resource === 'services')).toMatchObject({ used: 0, source: 'agents,serverless' });
    } finally {
      d.app.ctx.hooks.quotaUsage.pop();
    }
    expect((await d.api('GET', path, { token: c.platformAdmin.token })).status).toBe(200);
    expect((await d.api('GET', path, { token: c.outsider.token })).status).toBe(404);
    expect((await d.api('GET', path)).status).toBe(401);
  });

  it('GET /v1/platform/limits: the numbers of spec §8 for any signed-in caller', async () => {
    for (const t of [c.member.token, c.outsider.token, c.sa.token]) {
      const r = await d.api('GET', '/v1/platform/limits', { token: t });
      expect(r.status).toBe(200);
      expect(r.body.bodies.core_json_bytes).toBe(8192);
      expect(r.body.bodies.function_event_bytes).toBe(8 * 1024 * 1024);
      expect(r.body.paging).toEqual({ page_size_default: 50, page_size_max: 200, agent_log_lines_default: 500 });
      expect(r.body.quota_defaults).toContainEqual({ resource: 'instances', unit: 'count', limit: 50 });
      expect(r.body.instance_sizes.find((s: { default: boolean }) => s.default)).toMatchObject({ name: 'medium', cpu: '1', memory: '1Gi' });
      expect(r.body.credentials).toMatchObject({ session_token_hours: 12, break_glass_minutes_default: 240, break_glass_minutes_max: 1440 });
      expect(r.body.timeouts).toMatchObject({ request_seconds_default: 60, request_seconds_max: 900 });
    }
    expect((await d.api('GET', '/v1/platform/limits')).status).toBe(401);
  });

  it('a workload key (which may only mint a secret read token) is refused with 403 on quota, limits and members', async () => {
    const key = createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'summarizer');
    for (const path of [`/v1/projects/${c.project.id}/quota`, `/v1/projects/${c.project.id}/members`, '/v1/platform/limits']) {
      const r = await d.api('GET', path, { token: key });
      expect(r.status, path).toBe(403);
      expect(r.body.error).toMatch(/workload key/);
    }
    // Another project's workload key is an outsider: 404.
    const other = makeProject(d);
    const foreign = createWorkloadKey(d.db, d.app.ctx.clock, other.id, 'worker');
    expect((await d.api('GET', `/v1/projects/${c.project.id}/quota`, { token: foreign })).status).toBe(404);
  });
});

describe('404-not-403 on every project route of this area', () => {
  it('an outsider gets the same 404 body as for a missing project, whatever role the route needs', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', ''],
      ['PATCH', '', { name: 'x' }],
      ['DELETE', ''],
      ['GET', '/quota'],
      ['GET', '/members'],
      ['POST', '/members', { email: c.member.email }],
      ['PATCH', `/members/${c.member.id}`, { role: 'admin' }],
      ['DELETE', `/members/${c.member.id}`],
      ['PATCH', `/members/service-accounts/${c.sa.serviceAccountId}`, { role: 'admin' }],
      ['DELETE', `/members/service-accounts/${c.sa.serviceAccountId}`],
      ['POST', '/break-glass', { reason: 'twelve chars or more' }],
    ];
    const other = await makeUser(d);
    for (const [method, suffix, body] of routes) {
      const out = await d.api(method, `/v1/projects/${c.project.id}${suffix}`, { token: other.token, body });
      const missing = await d.api(method, `/v1/projects/no-such-project${suffix}`, { token: admin, body });
      expect(out.status, `${method} ${suffix}`).toBe(404);
      expect(out.body.error).toBe(missing.body.error);
    }
  });
});
