import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { messagingConfig } from '../../src/daemon/services/messaging/config.js';
import { makeSub, makeTopic, pull, subPath, subsPath, topicPath } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;
beforeAll(async () => {
  d = await startTestDaemon({ messaging: { ...messagingConfig({}), allowLoopbackPush: true } });
  c = await cast(d);
  p = c.project.id;
  await makeTopic(d, c.admin.token, p, 'events');
  await makeTopic(d, c.admin.token, p, 'other');
  await makeTopic(d, c.admin.token, p, 'parking');
});
afterAll(() => d.close());

const err = (r: { status: number; body: any }, status: number, message?: RegExp) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  if (message) expect(r.body.error).toMatch(message);
};
const create = (body: unknown, topic = 'events') => d.api('POST', subsPath(p, topic), { token: c.admin.token, body });

describe('subscriptions (spec 3 §2.4, §4.3)', () => {
  it('create with defaults: 201 pending, then ready with every field', async () => {
    const r = await create({ name: 'plain' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ state: 'pending', ready: false });
    const s = await makeSub(d, c.admin.token, p, 'events', 'plain2');
    expect(s).toEqual({
      name: 'plain2',
      path: `projects/${c.project.short}/topics/events/subscriptions/plain2`,
      topic: 'events',
      type: 'shared',
      ack_deadline_seconds: 30,
      max_deliver: 5,
      start_from: 'all',
      max_ack_pending: 1000,
      deliver: { mode: 'pull' },
      address: `persistent://p-${c.project.short}/main/events/subscription/plain2`,
      created_at: expect.any(String),
      state: 'ready',
      ready: true,
      stats: { backlog: 0, unacknowledged: 0, delivered: 0, consumers: 0, redeliver_rate: 0 },
    });
    expect(s).not.toHaveProperty('active_type');
  });

  it('create with every field set', async () => {
    const s = await makeSub(d, c.admin.token, p, 'events', 'full', {
      display_name: 'Full',
      type: 'key-shared',
      ack_deadline_seconds: 600,
      max_deliver: 9,
      start_from: 'new',
      max_ack_pending: 7,
      dead_letter: { topic: 'parking', after_attempts: 3 },
    });
    expect(s).toMatchObject({
      display_name: 'Full',
      type: 'key-shared',
      ack_deadline_seconds: 600,
      max_deliver: 9,
      start_from: 'new',
      max_ack_pending: 7,
      dead_letter: { topic: 'parking', after_attempts: 3 },
    });
    const push = await makeSub(d, c.admin.token, p, 'events', 'pushy', {
      type: 'exclusive',
      deliver: { mode: 'push', push: { url: 'http://127.0.0.1:9/hook', content_mode: 'cloudevents-binary' } },
    });
    expect(push.deliver).toEqual({ mode: 'push', push: { url: 'http://127.0.0.1:9/hook', content_mode: 'cloudevents-binary' } });
    // max_deliver 0 is read as unset: the default applies.
    expect((await makeSub(d, c.admin.token, p, 'events', 'zero', { max_deliver: 0 })).max_deliver).toBe(5);
  });

  it('create errors of the spec table', async () => {
    err(await create({ name: 'x', type: 'fanout' }), 400, /type: must be one of shared, key-shared, exclusive, failover/);
    err(await create({ name: 'x', ack_deadline_seconds: 0 }), 400, /ack deadline must be between 1 and 600/);
    err(await create({ name: 'x', ack_deadline_seconds: 601 }), 400, /ack deadline must be between 1 and 600/);
    err(await create({ name: 'x', max_deliver: -1 }), 400, /max_deliver must not be negative/);
    err(await create({ name: 'x', start_from: 'middle' }), 400, /start_from: must be one of all, new/);
    err(await create({ name: 'x', deliver: { mode: 'carrier-pigeon' } }), 400, /deliver.mode: must be one of pull, push/);
    err(await create({ name: 'x', type: 'exclusive' }), 400, /exclusive type cannot be read through this API \(use push or a direct client\)/);
    err(await create({ name: 'x', deliver: { mode: 'pull', push: { url: 'http://127.0.0.1/' } } }), 400, /deliver.push is set while deliver.mode is pull/);
    err(await create({ name: 'x', deliver: { mode: 'push' } }), 400, /deliver.push.url is required/);
    err(await create({ name: 'x', deliver: { mode: 'push', push: { url: 'http://127.0.0.1/', content_mode: 'xml' } } }), 400, /content_mode/);
    err(await create({ name: 'x', dead_letter: { topic: 'missing' } }), 400, /dead_letter.topic missing does not exist/);
    err(await create({ name: 'x', dead_letter: { topic: 'events' } }), 400, /must differ from the subscription's own topic/);
    err(await create({ name: 'x', colour: 1 }), 400, /unknown body field: colour/);
    err(await create({ name: 'x', deliver: { mode: 'push', push: { url: 'http://127.0.0.1/', extra: 1 } } }), 400, /unknown body field: deliver.push.extra/);
    err(await create({ name: 'Bad' }), 400, /invalid field name/);
    err(await create({ name: 'plain' }), 409, /already exists/);
    err(await create({ name: 'x' }, 'absent-topic'), 404);
  });

  it('push url rules: http only, no userinfo, workloads of this project (loopback only when allowed)', async () => {
    const short = c.project.short;
    const url = (u: string) => create({ name: 'p', deliver: { mode: 'push', push: { url: u } } });
    for (const bad of [
      'https://127.0.0.1/x',
      'http://user:pw@127.0.0.1/x',
      'ftp://127.0.0.1/',
      'not a url',
      'http://example.com/hook',
      'http://10.0.0.8/hook',
      `http://fn-zzzzzz.apps.localhost/`,
    ]) {
      err(await url(bad), 400, /push url not allowed: use the http:\/\/ url of a workload in this project/);
    }
    const ok = await url(`http://fn-${short}.apps.localhost:8080/`);
    expect(ok.status, ok.text).toBe(201);
    const strict = await startTestDaemon();
    try {
      const k = await cast(strict);
      await makeTopic(strict, k.admin.token, k.project.id, 't');
      const r = await strict.api('POST', subsPath(k.project.id, 't'), { token: k.admin.token, body: { name: 'p', deliver: { mode: 'push', push: { url: 'http://127.0.0.1:9/' } } } });
      err(r, 400, /push url not allowed/);
    } finally {
      await strict.close();
    }
  });

  it('get, list (paged, per topic) and 404 for a subscription of another topic', async () => {
    const g = await d.api('GET', subPath(p, 'events', 'plain'), { token: c.member.token });
    expect(g.status).toBe(200);
    err(await d.api('GET', subPath(p, 'other', 'plain'), { token: c.member.token }), 404);
    const first = await d.api('GET', `${subsPath(p, 'events')}?page_size=2`, { token: c.member.token });
    expect(first.body.subscriptions.map((s: any) => s.name)).toEqual(['full', 'p']);
    let names = first.body.subscriptions.map((s: any) => s.name);
    let token = first.body.next_page_token;
    while (token) {
      const r = await d.api('GET', `${subsPath(p, 'events')}?page_size=2&page_token=${token}`, { token: c.member.token });
      names = names.concat(r.body.subscriptions.map((s: any) => s.name));
      token = r.body.next_page_token;
    }
    expect(names).toEqual(['full', 'p', 'plain', 'plain2', 'pushy', 'zero']);
    // A page token of one topic's list does not continue another's.
    err(await d.api('GET', `${subsPath(p, 'other')}?page_token=${first.body.next_page_token}`, { token: c.member.token }), 400, /different list/);
    err(await d.api('GET', subsPath(p, 'absent'), { token: c.member.token }), 404);
  });

  it('patch: patchable fields change, immutable ones are refused, dead_letter clears with an empty topic', async () => {
    const r = await d.api('PATCH', subPath(p, 'events', 'full'), {
      token: c.admin.token,
      body: { display_name: 'F2', ack_deadline_seconds: 10, max_deliver: 2, max_ack_pending: 50 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ display_name: 'F2', ack_deadline_seconds: 10, max_deliver: 2, max_ack_pending: 50, dead_letter: { topic: 'parking', after_attempts: 3 }, type: 'key-shared', start_from: 'new' });
    const cleared = await d.api('PATCH', subPath(p, 'events', 'full'), { token: c.admin.token, body: { dead_letter: { topic: '' } } });
    expect(cleared.body).not.toHaveProperty('dead_letter');
    for (const [field, value] of [['type', 'shared'], ['start_from', 'all'], ['topic', 'other'], ['name', 'renamed']] as const) {
      err(await d.api('PATCH', subPath(p, 'events', 'full'), { token: c.admin.token, body: { [field]: value } }), 400, new RegExp(`${field} is immutable`));
    }
    err(await d.api('PATCH', subPath(p, 'events', 'full'), { token: c.admin.token, body: { ack_deadline_seconds: 0 } }), 400, /ack deadline/);
    // deliver is patchable: pull -> push -> pull.
    const toPush = await d.api('PATCH', subPath(p, 'events', 'plain'), { token: c.admin.token, body: { deliver: { mode: 'push', push: { url: 'http://127.0.0.1:9/' } } } });
    expect(toPush.body.deliver).toEqual({ mode: 'push', push: { url: 'http://127.0.0.1:9/', content_mode: 'cloudevents-structured' } });
    err(await pull(d, c.member.token, p, 'events', 'plain'), 409, /push subscription/);
    const back = await d.api('PATCH', subPath(p, 'events', 'plain'), { token: c.admin.token, body: { deliver: { mode: 'pull' } } });
    expect(back.body.deliver).toEqual({ mode: 'pull' });
    // An exclusive subscription cannot be switched to pull.
    err(await d.api('PATCH', subPath(p, 'events', 'pushy'), { token: c.admin.token, body: { deliver: { mode: 'pull' } } }), 400, /exclusive/);
  });

  it('pull refuses push and exclusive subscriptions with 409', async () => {
    err(await pull(d, c.member.token, p, 'events', 'pushy'), 409, /push subscription/);
  });

  it('delete answers 202 and the subscription disappears', async () => {
    const r = await d.api('DELETE', subPath(p, 'events', 'zero'), { token: c.admin.token });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ name: 'zero', state: 'deleting', ready: false });
    for (let i = 0; i < 100 && (await d.api('GET', subPath(p, 'events', 'zero'), { token: c.admin.token })).status !== 404; i++) {
      await new Promise((res) => setTimeout(res, 5));
    }
    err(await d.api('GET', subPath(p, 'events', 'zero'), { token: c.admin.token }), 404);
    const t = await d.api('GET', topicPath(p, 'events'), { token: c.admin.token });
    expect(t.body.stats.subscriptions).toBe(5);
  });
});
