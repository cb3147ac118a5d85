import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, grant, makeProject } from '../helpers/fixtures.js';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { deployRecorder, objectsPath, triggersPath, until } from './helpers.js';

/**
 * Every route of spec 2 §4.4 (list, create, get, patch, delete, and :fire) with its errors,
 * member rights (a member creates, patches and deletes; an outsider gets 404 everywhere), target
 * resolution (a service first, then a function; another project's workload is 404), and the
 * object routes' confinement to their bucket folder (.., absolute keys, symbolic links).
 */
const python = await runtimeAvailable('python');
if (!python.ok) console.warn(`SKIPPED: trigger routes: ${python.reason}`);

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;
let other: { id: string; slug: string; short: string };

beforeAll(async () => {
  if (!python.ok) return;
  d = await startTestDaemon();
  c = await cast(d);
  p = c.project.id;
  other = makeProject(d);
  grant(d, other.id, c.member.id, 'member');
  await deployRecorder(d, c.member.token, c.project.slug);
  await deployRecorder(d, c.member.token, other.slug, 'elsewhere');
}, 120_000);
afterAll(async () => d?.close());

const schedule = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  target: { service: 'recorder' },
  source: { type: 'schedule', schedule: { cron: '0 3 * * *', time_zone: 'Europe/Paris', payload: '{"job":"nightly"}' } },
  ...extra,
});

describe.skipIf(!python.ok)('trigger routes', () => {
  it('create answers 202 with defaults; get carries the (empty) history; list does not', async () => {
    const r = await d.api('POST', triggersPath(p), { token: c.member.token, body: schedule('nightly') });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({
      name: 'nightly',
      project: `projects/${c.project.short}/triggers/nightly`,
      target: { service: 'recorder', path: '/', kind: 'function' },
      source: { type: 'schedule', schedule: { cron: '0 3 * * *', time_zone: 'Europe/Paris', payload: '{"job":"nightly"}' } },
      retry: { max_attempts: 3, backoff: { initial_seconds: 1, maximum_seconds: 60, multiplier: 2 } },
    });
    // 03:00 in Paris is 01:00 or 02:00 UTC depending on the season.
    expect(new Date(r.body.next_fire_time).getUTCHours()).toBeGreaterThanOrEqual(1);
    expect(new Date(r.body.next_fire_time).getUTCMinutes()).toBe(0);
    expect(r.body.firings).toBeUndefined();
    const g = await d.api('GET', `${triggersPath(p)}/nightly`, { token: c.admin.token });
    expect(g.status).toBe(200);
    expect(g.body.firings).toEqual([]);
    const l = await d.api('GET', triggersPath(p), { token: c.sa.token });
    expect(l.status).toBe(200);
    expect(l.body.triggers.map((t: any) => t.name)).toContain('nightly');
    expect(l.body.triggers[0].firings).toBeUndefined();
    expect('next_page_token' in l.body).toBe(false);
  });

  it('validation: name rule, unknown fields named, cron, zone, payload, sub-objects, retry bounds, 409 on a taken name', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [schedule('Bad_Name'), /invalid name/],
      [schedule('x'.repeat(53)), /invalid name/],
      [{ ...schedule('u1'), colour: 'red' }, /colour/],
      [schedule('u2', { source: { type: 'schedule', schedule: { cron: '* * *' } } }), /five fields/],
      [schedule('u3', { source: { type: 'schedule', schedule: { cron: '61 * * * *' } } }), /invalid source\.schedule\.cron/],
      [schedule('u4', { source: { type: 'schedule', schedule: { cron: '* * * * *', time_zone: 'Mars/Olympus' } } }), /time_zone/],
      [schedule('u5', { source: { type: 'schedule', schedule: { cron: '* * * * *', payload: 'not json' } } }), /payload must be JSON/],
      [schedule('u6', { source: { type: 'schedule' } }), /source\.schedule is required/],
      [schedule('u7', { source: { type: 'objectstore', schedule: { cron: '* * * * *' } } }), /source\.schedule is set while source\.type is objectstore/],
      [schedule('u8', { source: { type: 'webhook' } }), /type/],
      [schedule('u9', { retry: { max_attempts: 0 } }), /max_attempts must be between 1 and 100/],
      [schedule('u10', { retry: { backoff: { initial_seconds: 5, maximum_seconds: 1 } } }), /maximum_seconds must not be below/],
      [schedule('u11', { retry: { backoff: { multiplier: 50 } } }), /multiplier must be between 1 and 10/],
      [schedule('u12', { target: { service: 'recorder', path: 'no-slash' } }), /invalid target\.path/],
      [schedule('u13', { source: { type: 'objectstore', objectstore: { bucket: '../up' } } }), /invalid source\.objectstore\.bucket/],
      [schedule('u14', { target: { service: 'recorder', extra: 1 } }), /extra/],
    ];
    for (const [body, msg] of cases) {
      const r = await d.api('POST', triggersPath(p), { token: c.member.token, body });
      expect(r.status, `${JSON.stringify(body)} -> ${r.text}`).toBe(400);
      expect(r.body.error).toMatch(msg);
      expect(r.body.request_id).toBeTruthy();
    }
    const dup = await d.api('POST', triggersPath(p), { token: c.member.token, body: schedule('nightly') });
    expect(dup.status).toBe(409);
  });

  it('targets: unknown 404, another project\'s function 404 (there is no cross-project field), a serverless service resolves first', async () => {
    const missing = await d.api('POST', triggersPath(p), { token: c.member.token, body: schedule('t1', { target: { service: 'nobody' } }) });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/target nobody not found/);
    // The member can see the other project, and its function exists there: still not a target here.
    const cross = await d.api('POST', triggersPath(p), { token: c.member.token, body: schedule('t2', { target: { service: 'elsewhere' } }) });
    expect(cross.status).toBe(404);
    const viaPath = await d.api('POST', triggersPath(p), { token: c.member.token, body: schedule('t3', { target: { service: `../../${other.id}/elsewhere` } }) });
    expect(viaPath.status).toBe(404);
    const svc = await d.api('POST', `/v1/projects/${p}/services`, { token: c.member.token, body: { name: 'web', image: 'registry.example.test/web:1' } });
    expect(svc.status, svc.text).toBe(202);
    const t = await d.api('POST', triggersPath(p), { token: c.member.token, body: schedule('to-web', { target: { service: 'web' } }) });
    expect(t.status, t.text).toBe(202);
    expect(t.body.target).toEqual({ service: 'web', path: '/', kind: 'service' });
  });

  it('outsiders get 404 on every route; a non-UUID project is 404', async () => {
    const base = triggersPath(p);
    for (const [m, path, body] of [
      ['GET', base],
      ['POST', base, schedule('o1')],
      ['GET', `${base}/nightly`],
      ['PATCH', `${base}/nightly`, { retry: { max_attempts: 2 } }],
      ['DELETE', `${base}/nightly`],
      ['POST', `${base}/nightly:fire`],
      ['GET', objectsPath(p, 'inbox')],
      ['PUT', `${objectsPath(p, 'inbox')}/a.txt`],
    ] as const) {
      const r = await d.api(m, path, { token: c.outsider.token, ...(body ? { body } : {}) });
      expect(r.status, `${m} ${path}`).toBe(404);
    }
    expect((await d.api('GET', triggersPath(c.project.slug), { token: c.member.token })).status).toBe(404);
    expect((await d.api('GET', triggersPath(p), {})).status).toBe(401);
  });

  it('patch: sparse, source replaced, retry merged, no rename; 404 for an absent trigger', async () => {
    const r = await d.api('PATCH', `${triggersPath(p)}/nightly`, {
      token: c.member.token,
      body: { retry: { max_attempts: 5 }, source: { type: 'schedule', schedule: { cron: '15 4 * * 1', time_zone: 'UTC' } } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.retry).toEqual({ max_attempts: 5, backoff: { initial_seconds: 1, maximum_seconds: 60, multiplier: 2 } });
    expect(r.body.source.schedule).toEqual({ cron: '15 4 * * 1', time_zone: 'UTC' });
    const next = new Date(r.body.next_fire_time);
    expect([next.getUTCDay(), next.getUTCHours(), next.getUTCMinutes()]).toEqual([1, 4, 15]);
    const target = await d.api('PATCH', `${triggersPath(p)}/nightly`, { token: c.member.token, body: { target: { path: '/hook' } } });
    expect(target.body.target).toEqual({ service: 'recorder', path: '/hook', kind: 'function' });
    expect((await d.api('PATCH', `${triggersPath(p)}/nightly`, { token: c.member.token, body: { name: 'renamed' } })).status).toBe(400);
    expect((await d.api('PATCH', `${triggersPath(p)}/nightly`, { token: c.member.token, body: { target: { service: 'elsewhere' } } })).status).toBe(404);
    expect((await d.api('PATCH', `${triggersPath(p)}/absent`, { token: c.member.token, body: {} })).status).toBe(404);
  });

  it('paging: page_size, next_page_token only while more remain', async () => {
    for (const n of ['pa', 'pb', 'pc']) expect((await d.api('POST', triggersPath(p), { token: c.member.token, body: schedule(n) })).status).toBe(202);
    const all: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await d.api('GET', `${triggersPath(p)}?page_size=2${token ? `&page_token=${token}` : ''}`, { token: c.member.token });
      expect(r.status).toBe(200);
      all.push(...r.body.triggers.map((t: any) => t.name));
      token = r.body.next_page_token;
      pages++;
      if (r.body.triggers.length < 2) expect('next_page_token' in r.body).toBe(false);
    } while (token);
    expect(all).toEqual([...all].sort());
    expect(new Set(all).size).toBe(all.length);
    expect(pages).toBe(Math.ceil(all.length / 2));
    expect((await d.api('GET', `${triggersPath(p)}?page_size=500`, { token: c.member.token })).status).toBe(400);
  });

  it(':fire delivers the payload now as a CloudEvent; delete answers 204 and the trigger is gone', async () => {
    const f = await d.api('POST', `${triggersPath(p)}/pa:fire`, { token: c.member.token });
    expect(f.status, f.text).toBe(202);
    expect(f.body).toMatchObject({ status: 'pending', manual: true, attempts: 0 });
    const done = await until(
      async () => (await d.api('GET', `${triggersPath(p)}/pa`, { token: c.member.token })).body.firings,
      (fs: any[]) => fs[0]?.status === 'succeeded',
    );
    expect(done[0]).toMatchObject({ status: 'succeeded', attempts: 1, http_status: 204, manual: true });
    expect(done[0].duration_ms).toBeGreaterThanOrEqual(0);
    const del = await d.api('DELETE', `${triggersPath(p)}/pa`, { token: c.member.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await d.api('GET', `${triggersPath(p)}/pa`, { token: c.member.token })).status).toBe(404);
    expect((await d.api('DELETE', `${triggersPath(p)}/pa`, { token: c.member.token })).status).toBe(404);
  });

  it('object keys cannot leave their bucket: .., absolute keys, dot segments, symbolic links', async () => {
    const put = (key: string, body = 'x') => d.api('PUT', `${objectsPath(p, 'inbox')}/${key}`, { token: c.member.token, raw: body });
    expect((await put('ok/one.txt', 'hello')).status).toBe(201);
    for (const key of ['..%2F..%2Fplatform.db', 'a/..%2F..%2Fx', '%2Fetc%2Fpasswd', 'a/%2E%2E%2Fb', '.hidden', 'a//b', 'a%5Cb']) {
      const r = await put(key);
      expect(r.status, `${key}: ${r.text}`).toBe(400);
    }
    // The router itself normalises a literal ../ out of the URL: it never reaches a bucket.
    expect((await d.api('GET', `${objectsPath(p, 'inbox')}/../../../platform.db`, { token: c.member.token })).status).toBe(404);
    // A symbolic link planted in the folder (a file copy can bring one) is never served or followed.
    const dir = join(d.home, 'objects', c.project.short, 'inbox');
    writeFileSync(join(d.home, 'outside-secret.txt'), 'secret');
    symlinkSync(join(d.home, 'outside-secret.txt'), join(dir, 'link.txt'));
    mkdirSync(join(d.home, 'outside-dir'));
    writeFileSync(join(d.home, 'outside-dir', 'f.txt'), 'secret');
    symlinkSync(join(d.home, 'outside-dir'), join(dir, 'linkdir'));
    expect((await d.api('GET', `${objectsPath(p, 'inbox')}/link.txt`, { token: c.member.token })).status).toBe(404);
    expect((await d.api('GET', `${objectsPath(p, 'inbox')}/linkdir/f.txt`, { token: c.member.token })).status).toBe(404);
    expect((await put('linkdir/f.txt', 'overwrite')).status).toBe(409);
    const list = await d.api('GET', objectsPath(p, 'inbox'), { token: c.member.token });
    expect(list.body.objects.map((o: any) => o.key)).toEqual(['ok/one.txt']);
    const got = await d.api('GET', `${objectsPath(p, 'inbox')}/ok/one.txt`, { token: c.member.token });
    expect(got.text).toBe('hello');
    // Another project's bucket of the same name is another folder.
    expect((await d.api('GET', `${objectsPath(other.id, 'inbox')}/ok/one.txt`, { token: c.member.token })).status).toBe(404);
    expect((await d.api('GET', objectsPath('not-a-uuid', 'inbox'), { token: c.member.token })).status).toBe(404);
    expect((await d.api('GET', objectsPath(p, 'Bad_Bucket'), { token: c.member.token })).status).toBe(400);
  });
});
