import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlEnv, ready, serviceId, type ControlEnv } from './control-helpers.js';

/**
 * Revisions, conditions and states from the data plane's reports, traffic following the latest
 * ready revision, env_from sealed at rest, source uploads, and reconcile after a restart.
 */
let e: ControlEnv;
const home = mkdtempSync(join(tmpdir(), 'svc-control-'));
beforeAll(async () => {
  e = await controlEnv({}, home);
});
afterAll(async () => {
  await e.d.close();
  rmSync(home, { recursive: true, force: true });
});

const id = (name: string) => serviceId(e.d, e.people.project.id, name);
const get = async (name: string) => (await e.call('GET', `/${name}`)).body;
const cond = (s: { conditions: Array<{ type: string }> }, type: string) => s.conditions.find((c) => c.type === type) as Record<string, string>;

describe('states and traffic from reports', () => {
  it('a ready report makes the service ready', async () => {
    await e.call('POST', '', { name: 'web', image: 'nginx:1' });
    const before = await get('web');
    expect(before).toMatchObject({ state: 'pending', ready: false, observed_generation: 0 });
    expect(cond(before, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'RevisionPending' });
    e.plane.emit(id('web'), 'web-00001', ready());
    const s = await get('web');
    expect(s).toMatchObject({ state: 'ready', ready: true, latest_ready_revision: 'web-00001', latest_created_revision: 'web-00001', generation: 1, observed_generation: 1 });
    expect(s.message).toBeUndefined();
    expect(cond(s, 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(cond(s, 'ServiceReady').status).toBe('True');
    expect(cond(s, 'TrafficAccepted').status).toBe('True');
    expect(cond(s, 'Exposed')).toMatchObject({ status: 'False', reason: 'NotPublished' });
    expect(cond(s, 'RuntimeClassApplied').status).toBe('True');
    expect(cond(s, 'VisibilityEnforced')).toMatchObject({ status: 'True', reason: 'Private' });
    expect(Date.parse(cond(s, 'Ready').last_transition_time)).toBeGreaterThanOrEqual(Date.parse(cond(before, 'Ready').last_transition_time));
    const revs = (await e.call('GET', '/web/revisions')).body.revisions;
    expect(revs[0]).toMatchObject({ name: 'web-00001', state: 'ready', ready: true, replicas: 1, traffic_percent: 100 });
  });

  it('a new revision that never becomes ready leaves traffic on the last ready one, with the reason shown', async () => {
    const p = await e.call('PATCH', '/web', { image: 'nginx:missing' });
    expect(p.body).toMatchObject({ latest_created_revision: 'web-00002', latest_ready_revision: 'web-00001', generation: 2, observed_generation: 1, state: 'pending' });
    expect(p.body.active_traffic).toEqual([{ revision_name: 'web-00001', percent: 100 }]);
    let applied = e.plane.last(id('web'))!;
    expect(applied.traffic).toEqual([{ revision: 'web-00001', percent: 100 }]);
    expect(applied.revisions.map((r) => r.revision).sort()).toEqual(['web-00001', 'web-00002']);
    e.plane.emit(id('web'), 'web-00002', { state: 'not_ready', reason: 'ImagePullFailed', message: 'image nginx:missing not found in the local engine', replicas: 0 });
    const s = await get('web');
    expect(s).toMatchObject({ state: 'degraded', ready: false, latest_ready_revision: 'web-00001', observed_generation: 2 });
    expect(s.message).toMatch(/web-00002 is not ready \(ImagePullFailed\): image nginx:missing not found/);
    expect(s.message).toMatch(/traffic stays on web-00001/);
    expect(cond(s, 'ServiceReady')).toMatchObject({ status: 'False', reason: 'ImagePullFailed' });
    expect(cond(s, 'Ready').status).toBe('False');
    expect(cond(s, 'TrafficAccepted').status).toBe('True');
    expect(s.active_traffic).toEqual([{ revision_name: 'web-00001', percent: 100 }]);
    applied = e.plane.last(id('web'))!;
    expect(applied.traffic).toEqual([{ revision: 'web-00001', percent: 100 }]);
    const revs = (await e.call('GET', '/web/revisions')).body.revisions;
    expect(revs[0]).toMatchObject({ name: 'web-00002', state: 'not_ready', ready: false, reason: 'ImagePullFailed', message: expect.stringMatching(/not found/), traffic_percent: 0 });
    const m = (await e.call('GET', '/web/metrics')).body;
    expect(m.revisions.map((r: { name: string; latest_ready: boolean; latest_created: boolean }) => [r.name, r.latest_ready, r.latest_created])).toEqual([
      ['web-00002', false, true],
      ['web-00001', true, false],
    ]);
    expect(m.instances).toEqual({ current: 1, desired: 1 });
    expect(m.readiness).toMatchObject({ state: 'degraded', ready: false, reason: 'ImagePullFailed' });
  });

  it('latest_revision follows a new revision once it is ready', async () => {
    await e.call('PATCH', '/web', { image: 'nginx:2' });
    expect(e.plane.last(id('web'))!.traffic).toEqual([{ revision: 'web-00001', percent: 100 }]);
    e.plane.emit(id('web'), 'web-00003', ready(2));
    const s = await get('web');
    expect(s).toMatchObject({ state: 'ready', ready: true, latest_ready_revision: 'web-00003', active_traffic: [{ revision_name: 'web-00003', percent: 100 }] });
    expect(e.plane.last(id('web'))!.traffic).toEqual([{ revision: 'web-00003', percent: 100 }]);
    // A revision that scales to zero stays ready.
    e.plane.emit(id('web'), 'web-00003', { state: 'unknown', replicas: 0 });
    expect((await get('web')).state).toBe('ready');
  });

  it('a pinned revision that crashes makes the service not_ready when nothing else serves', async () => {
    await e.call('POST', '/web:set-traffic', { traffic: [{ revision_name: 'web-00002', percent: 100 }] });
    const s = await get('web');
    expect(s.state).toBe('not_ready');
    expect(cond(s, 'TrafficAccepted')).toMatchObject({ status: 'False', reason: 'RevisionNotReady' });
    expect(s.message).toMatch(/web-00002 is not ready/);
    await e.call('POST', '/web:set-traffic', { traffic: [{ revision_name: 'web-00002', percent: 50 }, { latest_revision: true, percent: 50, tag: 'current' }] });
    expect((await get('web')).state).toBe('degraded');
    const back = await e.call('POST', '/web:set-traffic', { traffic: [{ latest_revision: true, percent: 100 }] });
    expect(back.status).toBe(202);
    expect(back.body.state).toBe('ready');
  });

  it('publish.enabled is reported by Exposed and passed to the data plane', async () => {
    const r = await e.call('PATCH', '/web', { publish: { enabled: true, host: 'www.example.test' } });
    expect(r.body).toMatchObject({ published: true, publish: { enabled: true, host: 'www.example.test' }, latest_created_revision: 'web-00003' });
    expect(cond(r.body, 'Exposed')).toMatchObject({ status: 'True', reason: 'Published' });
    expect(e.plane.last(id('web'))!.published).toBe(true);
  });
});

describe('quota readout', () => {
  it('every revision holds two Services entries of the project quota (spec 1 §8.3); instances are live', async () => {
    const q = await e.d.api('GET', `/v1/projects/${e.people.project.id}/quota`, { token: e.people.member.token });
    expect(q.status).toBe(200);
    const row = (r: string) => q.body.quotas.find((x: { resource: string }) => x.resource === r);
    expect(row('services')).toMatchObject({ used: 6, limit: 30, source: expect.stringContaining('serverless') });
    const live = e.plane.instances(id('web')).reduce((n, i) => n + i.replicas, 0);
    expect(row('instances').used).toBe(live);
    expect(live).toBeGreaterThan(0);
    // Each replica at the default resources (requests 250m and 512Mi, limits 1 CPU and 512Mi) with
    // its proxy (limits 500m and 256Mi, requests 100m and 256Mi).
    expect(row('cpu_requests').by_source.serverless).toBeCloseTo(0.35 * live, 3);
    expect(row('memory_requests').by_source.serverless).toBe(768 * live);
    expect(row('cpu_limits').by_source.serverless).toBeCloseTo(1.5 * live, 3);
    expect(row('memory_limits').by_source.serverless).toBe(768 * live);
  });
});

describe('env_from', () => {
  const secret = (name: string, value: string) => e.d.api('POST', `/v1/projects/${e.people.project.id}/secrets`, { token: e.people.admin.token, body: { name, value } });

  it('reads project secrets into the revision, sealed at rest and never returned', async () => {
    expect((await secret('db-password', 'first-Value-1')).status).toBe(201);
    const r = await e.call('POST', '', {
      name: 'withsecret',
      image: 'nginx',
      env: { MODE: 'x' },
      env_from: [{ secret_name: 'db-password' }, { secret_name: 'absent', optional: true }, { config_map_name: 'cm', optional: true }, { secret_name: 'db-password', env_name: 'PG_PASS' }],
    });
    expect(r.status).toBe(202);
    expect(JSON.stringify(r.body)).not.toContain('first-Value-1');
    const env = e.plane.last(id('withsecret'))!.revisions[0]!.env;
    expect(env).toEqual({ MODE: 'x', DB_PASSWORD: 'first-Value-1', PG_PASS: 'first-Value-1', PLATFORM_REQUEST_TIMEOUT_SECONDS: '300' });
    const row = e.d.db.prepare('SELECT secret_env FROM svc_revisions WHERE service_id = ?').get(id('withsecret')) as { secret_env: string };
    expect(row.secret_env).not.toContain('first-Value-1');
    expect(row.secret_env.startsWith('gcm1:')).toBe(true);
    expect(readFileSync(join(home, 'platform.db')).includes('first-Value-1')).toBe(false);
    for (const p of ['/withsecret', '/withsecret/revisions', '/withsecret/spec', '/withsecret/metrics']) {
      expect((await e.call('GET', p)).text).not.toContain('first-Value-1');
    }
  });

  it('a changed secret needs a new revision: a patch picks it up, a no-op patch with the same value does not', async () => {
    e.plane.emit(id('withsecret'), 'withsecret-00001', ready());
    const noop = await e.call('PATCH', '/withsecret', {});
    expect(noop.body.latest_created_revision).toBe('withsecret-00001');
    await secret('db-password', 'second-Value-2');
    // The running revision keeps the value it was created with.
    expect(e.plane.last(id('withsecret'))!.revisions[0]!.env.DB_PASSWORD).toBe('first-Value-1');
    const p = await e.call('PATCH', '/withsecret', {});
    expect(p.body.latest_created_revision).toBe('withsecret-00002');
    // Both run: the ready one keeps the traffic while the new one is readied.
    const revs = e.plane.last(id('withsecret'))!.revisions;
    expect(revs.find((r) => r.revision === 'withsecret-00002')!.env.DB_PASSWORD).toBe('second-Value-2');
    expect(revs.find((r) => r.revision === 'withsecret-00001')!.env.DB_PASSWORD).toBe('first-Value-1');
  });

  it('a missing secret or config map is refused unless optional; entries are checked', async () => {
    const r = await e.call('POST', '', { name: 'nosecret', image: 'nginx', env_from: [{ secret_name: 'ghost' }] });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/secret ghost not found/);
    expect((await e.call('POST', '', { name: 'nosecret', image: 'nginx', env_from: [{ config_map_name: 'cm' }] })).body.error).toMatch(/config map cm not found/);
    expect((await e.call('POST', '', { name: 'nosecret', image: 'nginx', env_from: [{}] })).body.error).toMatch(/exactly one of secret_name or config_map_name/);
    expect((await e.call('POST', '', { name: 'nosecret', image: 'nginx', env_from: [{ secret_name: 'db-password', env_name: '1X' }] })).status).toBe(400);
    expect((await e.call('POST', '', { name: 'nosecret', image: 'nginx', env_from: [{ secret_name: 'db-password', prefix: 'X' }] })).body.error).toBe('unknown body field: env_from.0.prefix');
    expect((await e.call('GET', '/nosecret')).status).toBe(404);
  });
});

describe('source uploads', () => {
  let tgz: Buffer;
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-src-'));
    writeFileSync(join(dir, 'main.py'), 'print("hi")\n');
    tgz = execFileSync('tar', ['-czf', '-', '-C', dir, '.']);
    rmSync(dir, { recursive: true, force: true });
  });
  const upload = (body: Buffer | string, token = e.people.member.token) =>
    fetch(`${e.d.url}${e.base}/sources`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/gzip' }, body });

  it('stores the archive content-addressed and answers an image reference that create accepts', async () => {
    const r = await upload(tgz);
    expect(r.status).toBe(201);
    const body = (await r.json()) as { image: string; digest: string; size_bytes: number };
    expect(body.image).toMatch(new RegExp(`^source\\.platform\\.local/${e.people.project.short}/sha256-[0-9a-f]{64}$`));
    expect(body.digest).toBe(`sha256:${body.image.split('sha256-')[1]}`);
    expect(body.size_bytes).toBe(tgz.length);
    const again = (await (await upload(tgz)).json()) as { image: string };
    expect(again.image).toBe(body.image);
    const c = await e.call('POST', '', { name: 'fromsrc', image: body.image });
    expect(c.status).toBe(202);
    expect(e.plane.last(id('fromsrc'))!.revisions[0]!.image).toBe(body.image);
    expect(readFileSync(join(home, 'serverless', 'sources', e.people.project.short, `sha256-${body.image.split('sha256-')[1]}.tar.gz`)).equals(tgz)).toBe(true);
  });

  it('refuses what is not a .tar.gz, and outsiders', async () => {
    expect((await upload('plain text')).status).toBe(400);
    expect((await upload(Buffer.alloc(0))).status).toBe(400);
    expect((await upload(tgz, e.people.outsider.token)).status).toBe(404);
  });
});

describe('restart', () => {
  it('a restarted daemon keeps every state and hands every service to its data plane again', async () => {
    const before = await get('web');
    await e.d.close();
    e = await controlEnv({}, home).catch((err) => {
      throw err;
    });
    // controlEnv made a fresh cast in the same state dir; read the old project's services directly.
    const old = e.d.db.prepare('SELECT id, name, state, generation FROM svc_services ORDER BY name').all() as Array<{ id: string; name: string; state: string; generation: number }>;
    expect(old.find((s) => s.name === 'web')).toMatchObject({ state: before.state, generation: before.generation });
    for (const s of old) expect(e.plane.last(s.id), s.name).toBeDefined();
    const web = old.find((s) => s.name === 'web')!;
    expect(e.plane.last(web.id)!.traffic).toEqual([{ revision: 'web-00003', percent: 100 }]);
  });
});

describe('secret store unavailable', () => {
  it('a service whose sealed env_from cannot be opened is invalid; a patch that keeps the template still applies', async () => {
    await e.d.close();
    e = await controlEnv({ secretsStore: 'off' }, home);
    const row = e.d.db.prepare("SELECT s.project_id FROM svc_services s WHERE s.name = 'withsecret'").get() as { project_id: string };
    const owner = e.d.db.prepare("SELECT u.id FROM acct_project_members m JOIN acct_users u ON u.id = m.user_id WHERE m.project_id = ? AND m.role = 'member'").get(row.project_id) as { id: string };
    expect(owner).toBeDefined();
    const base = `/v1/projects/${row.project_id}/services`;
    // The old project's member signs in again (the fixture password is shared).
    const email = (e.d.db.prepare('SELECT email FROM acct_users WHERE id = ?').get(owner.id) as { email: string }).email;
    const token = await e.d.login(email, 'Fixture-Password-1');
    const s = (await e.d.api('GET', `${base}/withsecret`, { token })).body;
    expect(s.state).toBe('invalid');
    expect(s.ready).toBe(false);
    expect(s.message).toMatch(/the revision cannot be prepared/);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'Invalid' });
    const scaled = await e.d.api('PATCH', `${base}/withsecret`, { token, body: { scaling: { max_scale: 3 } } });
    expect(scaled.status).toBe(200);
    expect(scaled.body.latest_created_revision).toBe('withsecret-00002');
    const templ = await e.d.api('PATCH', `${base}/withsecret`, { token, body: { image: 'nginx:9' } });
    expect(templ.status).toBe(503);
    // Services without env_from are untouched by the store.
    expect((await e.d.api('GET', `${base}/web`, { token })).body.state).not.toBe('invalid');
  });
});
