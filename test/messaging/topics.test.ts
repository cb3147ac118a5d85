import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { makeSub, makeTopic, publish, subPath, subsPath, topicPath, topicsPath, untilReady } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;
beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
  p = c.project.id;
});
afterAll(() => d.close());

const err = (r: { status: number; body: any }, status: number, message?: RegExp) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.request_id).toMatch(/^req_/);
  if (message) expect(r.body.error).toMatch(message);
};

describe('topics (spec 3 §2.3, §4.3)', () => {
  it('admin creates a topic: 201 pending, then ready with the spec fields', async () => {
    const r = await d.api('POST', topicsPath(p), { token: c.admin.token, body: { name: 'orders', display_name: 'Orders' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'orders', display_name: 'Orders', state: 'pending', ready: false, message: expect.any(String) });
    const t = await untilReady(d, c.admin.token, topicPath(p, 'orders'));
    expect(t).toEqual({
      name: 'orders',
      display_name: 'Orders',
      path: `projects/${c.project.short}/topics/orders`,
      max_bytes: '16Mi',
      discard: 'old',
      address: `persistent://p-${c.project.short}/main/orders`,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      state: 'ready',
      ready: true,
      stats: { published: 0, delivered: 0, published_bytes: 0, delivered_bytes: 0, storage_bytes: 0, backlog_bytes: 0, subscriptions: 0, producers: 0 },
    });
    expect(t).not.toHaveProperty('max_age');
    expect(t).not.toHaveProperty('message');
  });

  it('create validates name, max_bytes, max_age, discard and unknown fields', async () => {
    const bad = async (body: unknown, re: RegExp) => err(await d.api('POST', topicsPath(p), { token: c.admin.token, body }), 400, re);
    await bad({}, /missing required field: name/);
    await bad({ name: '' }, /name is required/);
    await bad({ name: 'a'.repeat(64) }, /at most 63/);
    await bad({ name: 'Bad_Name' }, /invalid field name/);
    await bad({ name: '9abc' }, /invalid field name/);
    await bad({ name: 'abc-' }, /invalid field name/);
    await bad({ name: 'ok', max_bytes: 'lots' }, /max_bytes.*not a valid quantity/);
    await bad({ name: 'ok', max_age: 'forever' }, /max_age.*not a valid duration/);
    await bad({ name: 'ok', discard: 'middle' }, /discard: must be one of old, new/);
    await bad({ name: 'ok', color: 'red' }, /unknown body field: color/);
    expect((await d.api('POST', topicsPath(p), { token: c.admin.token, body: { name: 'a'.repeat(63) } })).status).toBe(201);
  });

  it('a duplicate name is 409', async () => {
    err(await d.api('POST', topicsPath(p), { token: c.admin.token, body: { name: 'orders' } }), 409, /already exists/);
  });

  it('max_age and discard are kept and shown; max_age is omitted when zero', async () => {
    const t = await makeTopic(d, c.admin.token, p, 'aged', { max_bytes: '1Mi', max_age: '90m', discard: 'new' });
    expect(t).toMatchObject({ max_bytes: '1Mi', max_age: '1h30m', discard: 'new' });
  });

  it('patch keeps omitted fields, clears max_age with an empty string, refuses name', async () => {
    const r = await d.api('PATCH', topicPath(p, 'aged'), { token: c.admin.token, body: { display_name: 'Aged' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ display_name: 'Aged', max_bytes: '1Mi', max_age: '1h30m', discard: 'new' });
    const r2 = await d.api('PATCH', topicPath(p, 'aged'), { token: c.admin.token, body: { max_age: '', discard: 'old' } });
    expect(r2.body).toMatchObject({ discard: 'old', display_name: 'Aged' });
    expect(r2.body).not.toHaveProperty('max_age');
    err(await d.api('PATCH', topicPath(p, 'aged'), { token: c.admin.token, body: { name: 'x' } }), 400, /name is immutable/);
    err(await d.api('PATCH', topicPath(p, 'aged'), { token: c.admin.token, body: { max_bytes: '1Zi' } }), 400, /not a valid quantity/);
    err(await d.api('PATCH', topicPath(p, 'nope'), { token: c.admin.token, body: {} }), 404);
  });

  it('list pages by name and omits next_page_token on the last page', async () => {
    const first = await d.api('GET', `${topicsPath(p)}?page_size=2`, { token: c.member.token });
    expect(first.status).toBe(200);
    expect(first.body.topics.map((t: any) => t.name)).toEqual(['a'.repeat(63), 'aged']);
    expect(first.body.next_page_token).toEqual(expect.any(String));
    const second = await d.api('GET', `${topicsPath(p)}?page_size=2&page_token=${first.body.next_page_token}`, { token: c.member.token });
    expect(second.body.topics.map((t: any) => t.name)).toEqual(['orders']);
    expect(second.body).not.toHaveProperty('next_page_token');
    err(await d.api('GET', `${topicsPath(p)}?page_size=500`, { token: c.member.token }), 400, /page_size/);
    err(await d.api('GET', `${topicsPath(p)}?page_token=forged`, { token: c.member.token }), 400, /page_token/);
  });

  it('delete answers 202 deleting, then the topic and its subscriptions are gone', async () => {
    await makeTopic(d, c.admin.token, p, 'doomed');
    await makeSub(d, c.admin.token, p, 'doomed', 'reader');
    await publish(d, c.member.token, p, 'doomed', [{ text: 'x' }]);
    const r = await d.api('DELETE', topicPath(p, 'doomed'), { token: c.admin.token });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ name: 'doomed', state: 'deleting', ready: false });
    for (let i = 0; i < 100 && (await d.api('GET', topicPath(p, 'doomed'), { token: c.admin.token })).status !== 404; i++) {
      await new Promise((res) => setTimeout(res, 5));
    }
    err(await d.api('GET', topicPath(p, 'doomed'), { token: c.admin.token }), 404);
    err(await d.api('GET', subPath(p, 'doomed', 'reader'), { token: c.admin.token }), 404);
    const left = d.db.prepare(`SELECT (SELECT COUNT(*) FROM msg_messages) + (SELECT COUNT(*) FROM msg_subscriptions s JOIN msg_topics t ON t.id = s.topic_id WHERE t.name = 'doomed') AS n`).get() as { n: number };
    expect(left.n).toBe(0);
    err(await d.api('DELETE', topicPath(p, 'doomed'), { token: c.admin.token }), 404);
  });

  it('custom verbs: bare POST to a topic is 405, an unknown verb is 404', async () => {
    err(await d.api('POST', topicPath(p, 'orders'), { token: c.member.token, body: {} }), 405, /not allowed/);
    err(await d.api('POST', `${topicPath(p, 'orders')}:frobnicate`, { token: c.member.token, body: {} }), 404);
  });

  it('create body is capped at 1 MiB', async () => {
    const r = await d.api('POST', topicsPath(p), { token: c.admin.token, body: { name: 'big', display_name: 'x'.repeat(1024 * 1024 + 10) } });
    expect(r.status).toBe(413);
  });
});

describe('project budget and topic count (spec 3 §8)', () => {
  let d2: TestDaemon;
  let c2: Awaited<ReturnType<typeof cast>>;
  beforeAll(async () => {
    const base = (await import('../../src/daemon/services/messaging/config.js')).messagingConfig({});
    d2 = await startTestDaemon({ messaging: { ...base, projectBudgetBytes: 64 * 1024 * 1024, maxTopicsPerProject: 3, maxConsumersPerTopic: 2 } });
    c2 = await cast(d2);
  });
  afterAll(() => d2.close());

  it('claims max_bytes at creation; 409 states budget, claim and topic count; raise re-checks the delta', async () => {
    const q = c2.project.id;
    await makeTopic(d2, c2.admin.token, q, 'one', { max_bytes: '32Mi' });
    await makeTopic(d2, c2.admin.token, q, 'two', { max_bytes: '16Mi' });
    const over = await d2.api('POST', topicsPath(q), { token: c2.admin.token, body: { name: 'three', max_bytes: '32Mi' } });
    err(over, 409, /budget 64Mi.*claimed 48Mi by 2 topics.*32Mi more/);
    // Raising by exactly what is left fits; one byte more does not.
    expect((await d2.api('PATCH', topicPath(q, 'two'), { token: c2.admin.token, body: { max_bytes: '32Mi' } })).status).toBe(200);
    err(await d2.api('PATCH', topicPath(q, 'one'), { token: c2.admin.token, body: { max_bytes: '33Mi' } }), 409, /budget 64Mi.*claimed 64Mi by 2 topics.*1Mi more/);
    // Lowering is always allowed and frees claim.
    expect((await d2.api('PATCH', topicPath(q, 'one'), { token: c2.admin.token, body: { max_bytes: '16Mi' } })).status).toBe(200);
    const quota = await d2.api('GET', `/v1/projects/${q}/pubsub/quota`, { token: c2.member.token });
    expect(quota.body).toMatchObject({ limit_bytes: 64 * 1024 * 1024, allocated_bytes: 48 * 1024 * 1024, available_bytes: 16 * 1024 * 1024, topics: 2, provisioned: true });
    await makeTopic(d2, c2.admin.token, q, 'three', { max_bytes: '1Mi' });
    err(await d2.api('POST', topicsPath(q), { token: c2.admin.token, body: { name: 'four', max_bytes: '1Mi' } }), 409, /topic limit reached: 3 topics of 3/);
  });

  it('producers and consumers are capped (2 here, 100 by default); X-Consumer-Id must be printable', async () => {
    const q = c2.project.id;
    await makeSub(d2, c2.admin.token, q, 'three', 's');
    expect((await publish(d2, c2.member.token, q, 'three', [{ text: 'a' }])).status).toBe(200);
    expect((await publish(d2, c2.admin.token, q, 'three', [{ text: 'b' }])).status).toBe(200);
    err(await publish(d2, c2.sa.token, q, 'three', [{ text: 'c' }]), 409, /too many producers on topic three \(limit 2\)/);
    const as = (id: string) => d2.api('POST', `${subPath(q, 'three', 's')}:pull`, { token: c2.member.token, body: { timeout_ms: 0 }, headers: { 'x-consumer-id': id } });
    expect((await as('one')).status).toBe(200);
    expect((await as('two')).status).toBe(200);
    err(await as('three'), 409, /too many consumers on subscription s \(limit 2\)/);
    expect((await as('one')).status).toBe(200);
    err(await as('bad id with spaces'), 400, /x-consumer-id must be 1 to 128 printable characters/);
  });

  it('quota reports provisioned false before the first topic', async () => {
    const other = await cast(d2);
    const r = await d2.api('GET', `/v1/projects/${other.project.id}/pubsub/quota`, { token: other.member.token });
    expect(r.body).toEqual({
      limit_bytes: 64 * 1024 * 1024,
      allocated_bytes: 0,
      backlog_bytes: 0,
      storage_bytes: 0,
      available_bytes: 64 * 1024 * 1024,
      human: expect.stringContaining('0B of 64Mi'),
      topics: 0,
      provisioned: false,
    });
  });
});

describe('pending topics (broker not converged yet)', () => {
  it('publish answers 409 until the topic is ready; creating a subscription works meanwhile', async () => {
    const base = (await import('../../src/daemon/services/messaging/config.js')).messagingConfig({});
    const slow = await startTestDaemon({ messaging: { ...base, convergeDelayMs: 60_000 } });
    try {
      const k = await cast(slow);
      expect((await slow.api('POST', topicsPath(k.project.id), { token: k.admin.token, body: { name: 'slow' } })).status).toBe(201);
      err(await publish(slow, k.member.token, k.project.id, 'slow', [{ text: 'x' }]), 409, /not ready \(state pending\)/);
      const s = await slow.api('POST', subsPath(k.project.id, 'slow'), { token: k.admin.token, body: { name: 's' } });
      expect(s.body).toMatchObject({ state: 'pending', ready: false });
      err(await slow.api('POST', `${subPath(k.project.id, 'slow', 's')}:pull`, { token: k.member.token, body: {} }), 409, /not ready/);
      const quota = await slow.api('GET', `/v1/projects/${k.project.id}/pubsub/quota`, { token: k.member.token });
      expect(quota.body.provisioned).toBe(false);
      // Health turns 503 degraded when the broker is down.
      await slow.app.stop();
      for (const path of ['/v1/pubsub/healthz', '/healthz']) {
        const h = await slow.api('GET', path);
        expect(h.status).toBe(503);
        expect(h.body).toMatchObject({ status: 'degraded', dependencies: { broker: { status: 'down', critical: true, error: 'broker not running' } } });
      }
    } finally {
      await slow.close();
    }
  });
});

describe('project views', () => {
  it('usage lists per-topic counters with totals and a caveat', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'billing');
    expect((await publish(d, c.member.token, p, 'orders', [{ text: 'abc' }, { text: 'de' }])).status).toBe(200);
    const r = await d.api('GET', `/v1/projects/${p}/pubsub/usage`, { token: c.member.token });
    expect(r.status).toBe(200);
    expect(r.body.project).toBe(c.project.slug);
    const row = r.body.topics.find((t: any) => t.name === 'orders');
    expect(row).toEqual({ name: 'orders', published: 2, delivered: 0, published_bytes: 5, delivered_bytes: 0, storage_bytes: 5, backlog_bytes: 5, subscriptions: 1 });
    expect(r.body.totals).toMatchObject({ name: 'total', published: 2, storage_bytes: 5 });
    expect(r.body.caveat).toMatch(/reset/);
  });

  it('credentials (admin only) give a non-expiring project-scoped JWT and the topic prefix', async () => {
    const r = await d.api('GET', `/v1/projects/${p}/pubsub/credentials`, { token: c.admin.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      service_url: expect.stringMatching(/^pulsar:\/\/.+:6650$/),
      topic_prefix: `persistent://p-${c.project.short}/main/`,
      token: expect.stringMatching(/^ey[\w-]+\.[\w-]+\.[\w-]+$/),
      note: expect.stringContaining('never expires'),
    });
    expect(r.body).not.toHaveProperty('external_endpoint');
    const claims = JSON.parse(Buffer.from(r.body.token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: `p-${c.project.short}`, topic_prefix: r.body.topic_prefix });
    expect(claims).not.toHaveProperty('exp');
    err(await d.api('GET', `/v1/projects/${p}/pubsub/credentials`, { token: c.member.token }), 403);
  });

  it('messaging health is GET /healthz of the base URL (and /v1/pubsub/healthz) with status and dependencies, no credential needed', async () => {
    const daemon = await d.api('GET', '/healthz');
    expect(daemon.status).toBe(200);
    const r = await d.api('GET', '/v1/pubsub/healthz');
    expect(r.status).toBe(200);
    // The daemon's own route adds its version and how far the start's reconciliation is (issue 26).
    expect(daemon.body).toEqual({ ...r.body, version: expect.any(String), reconciliation: expect.any(Object) });
    expect(r.body).toEqual({
      status: 'ok',
      dependencies: {
        orchestration: { status: 'not configured', critical: false },
        database: { status: 'ok', critical: true },
        broker: { status: 'ok', critical: true },
        'session-key': { status: 'ok', critical: true },
      },
    });
  });
});

describe('authorization (spec 3 §5)', () => {
  const routes = () => {
    const t = topicPath(p, 'orders');
    const s = subPath(p, 'orders', 'billing');
    return [
      { m: 'GET', path: topicsPath(p), admin: false },
      { m: 'POST', path: topicsPath(p), admin: true, body: { name: 'by-member' } },
      { m: 'GET', path: t, admin: false },
      { m: 'PATCH', path: t, admin: true, body: { display_name: 'x' } },
      { m: 'DELETE', path: t, admin: true },
      { m: 'POST', path: `${t}:publish`, admin: false, body: { messages: [{ text: 'x' }] } },
      { m: 'GET', path: subsPath(p, 'orders'), admin: false },
      { m: 'POST', path: subsPath(p, 'orders'), admin: true, body: { name: 'by-member' } },
      { m: 'GET', path: s, admin: false },
      { m: 'PATCH', path: s, admin: true, body: { display_name: 'x' } },
      { m: 'DELETE', path: s, admin: true },
      { m: 'POST', path: `${s}:pull`, admin: false, body: { timeout_ms: 0 } },
      { m: 'POST', path: `${s}:acknowledge`, admin: false, body: { ack_ids: ['x'] } },
      { m: 'POST', path: `${s}:ack`, admin: false, body: { ack_ids: ['x'] } },
      { m: 'GET', path: `/v1/projects/${p}/pubsub/quota`, admin: false },
      { m: 'GET', path: `/v1/projects/${p}/pubsub/usage`, admin: false },
      { m: 'GET', path: `/v1/projects/${p}/pubsub/credentials`, admin: true },
    ];
  };

  it('an outsider gets the same 404 on every route; so does a platform admin without grants', async () => {
    for (const who of [c.outsider, c.platformAdmin]) {
      for (const r of routes()) {
        const res = await d.api(r.m, r.path, { token: who.token, body: r.body });
        // A platform admin holds metadata authority only: contents stay invisible (403 needs a contents role).
        if (who === c.platformAdmin) expect([403, 404], `${r.m} ${r.path}`).toContain(res.status);
        else expect(res.status, `${r.m} ${r.path}`).toBe(404);
      }
    }
  });

  it('malformed or unknown project ids are 404', async () => {
    for (const ref of ['not-a-uuid', '00000000-0000-0000-0000-000000000000']) {
      err(await d.api('GET', topicsPath(ref), { token: c.admin.token }), 404);
    }
  });

  it('a member gets 403 on every admin route; member routes work for members and service-account keys', async () => {
    for (const r of routes()) {
      const res = await d.api(r.m, r.path, { token: c.member.token, body: r.body });
      if (r.admin) expect(res.status, `${r.m} ${r.path}`).toBe(403);
      else expect(res.status, `${r.m} ${r.path}: ${res.text}`).not.toBe(403);
    }
    expect((await d.api('GET', topicsPath(p), { token: c.sa.token })).status).toBe(200);
    expect((await publish(d, c.sa.token, p, 'orders', [{ text: 'from a key' }])).status).toBe(200);
  });

  it('no credential is 401 with the sign-in hint', async () => {
    err(await d.api('GET', topicsPath(p)), 401, /POST \/v1\/auth\/login/);
  });
});
