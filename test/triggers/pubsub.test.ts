import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { triggersConfig } from '../../src/daemon/services/triggers/config.js';
import { makeSub, makeTopic, publish, pull, subPath, text } from '../messaging/helpers.js';
import { deployRecorder, history, recorded, triggersPath, until } from './helpers.js';

/**
 * Pubsub triggers consume through the messaging broker: a published message reaches a deployed
 * function as a CloudEvent and is acknowledged; a target that keeps failing is retried with the
 * trigger's backoff and then dead-lettered as its subscription says; a function's 400 is not
 * retried. A member creates them (the trigger's own subscription is the platform's doing).
 */
const python = await runtimeAvailable('python');
if (!python.ok) console.warn(`SKIPPED: pubsub triggers: ${python.reason}`);

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;

beforeAll(async () => {
  if (!python.ok) return;
  d = await startTestDaemon({ triggers: { ...triggersConfig({}), attemptTimeoutMs: 500 } });
  c = await cast(d);
  p = c.project.id;
  await deployRecorder(d, c.member.token, c.project.slug);
  for (const t of ['orders', 'jobs', 'parked']) await makeTopic(d, c.admin.token, p, t);
  await makeSub(d, c.admin.token, p, 'parked', 'inspect');
  await makeSub(d, c.admin.token, p, 'jobs', 'job-runner', { dead_letter: { topic: 'parked', after_attempts: 3 } });
}, 120_000);
afterAll(async () => d?.close());

const create = (body: Record<string, unknown>) => d.api('POST', triggersPath(p), { token: c.member.token, body: { target: { service: 'recorder' }, ...body } });
const events = () => recorded(d, c.member.token, c.project.slug);

describe.skipIf(!python.ok)('pubsub triggers', () => {
  it('a published message reaches the function as a CloudEvent and is acknowledged', { timeout: 30_000 }, async () => {
    const r = await create({ name: 'on-order', source: { type: 'pubsub', pubsub: { topic: 'orders' } } });
    expect(r.status, r.text).toBe(202);
    expect(r.body.source).toEqual({ type: 'pubsub', pubsub: { topic: 'orders', subscription: 'trigger-on-order' } });
    const sub = await d.api('GET', subPath(p, 'orders', 'trigger-on-order'), { token: c.member.token });
    expect(sub.status).toBe(200);
    const ids = (await publish(d, c.member.token, p, 'orders', [{ text: JSON.stringify({ order: 7 }), attributes: { datacontenttype: 'application/json', shop: 'north' } }])).body.message_ids;
    const seen = await until(events, (e) => e.some((x) => x.order === 7));
    const ev = seen.find((x) => x.order === 7);
    expect(ev._cloudevent).toMatchObject({ id: ids[0], type: 'ai.platform.pubsub.message.v1', specversion: '1.0', 'attr-shop': 'north', deliveryattempt: '1' });
    const fs = await until(() => history(d, c.member.token, p, 'on-order'), (f) => f[0]?.status === 'succeeded');
    expect(fs[0]).toMatchObject({ status: 'succeeded', attempts: 1, http_status: 204 });
    const backlog = await until(async () => (await d.api('GET', subPath(p, 'orders', 'trigger-on-order'), { token: c.member.token })).body.stats, (s: any) => s.backlog === 0 && s.unacknowledged === 0);
    expect(backlog).toMatchObject({ backlog: 0, unacknowledged: 0 });
    // The subscription the trigger made follows its retry.max_attempts.
    const patched = await d.api('PATCH', `${triggersPath(p)}/on-order`, { token: c.member.token, body: { retry: { max_attempts: 7 } } });
    expect(patched.status, patched.text).toBe(200);
    expect((await d.api('GET', subPath(p, 'orders', 'trigger-on-order'), { token: c.member.token })).body.max_deliver).toBe(7);
  });

  it('a target that keeps failing is retried with the backoff, then dead-lettered as the subscription says', { timeout: 40_000 }, async () => {
    const r = await create({
      name: 'on-job',
      source: { type: 'pubsub', pubsub: { topic: 'jobs', subscription: 'job-runner' } },
      retry: { max_attempts: 9, backoff: { initial_seconds: 0.3, maximum_seconds: 2, multiplier: 2 } },
    });
    expect(r.status, r.text).toBe(202);
    const ids = (await publish(d, c.member.token, p, 'jobs', [{ text: JSON.stringify({ job: 'slow', sleep: 1.5 }), attributes: { datacontenttype: 'application/json' } }])).body.message_ids;
    const fs = await until(() => history(d, c.member.token, p, 'on-job'), (f) => f[0]?.status === 'dead_lettered', 30_000);
    expect(fs[0]).toMatchObject({ status: 'dead_lettered', attempts: 3 });
    expect(fs[0].error).toMatch(/no response within the 500 ms deadline \(dead-lettered after 3 attempts\)/);
    // 3 attempts of 500 ms, with the trigger's waits of 0.3 s and 0.6 s between them.
    expect(fs[0].duration_ms).toBeGreaterThanOrEqual(3 * 500 + 300 + 600 - 50);
    const parked = await until(async () => (await pull(d, c.member.token, p, 'parked', 'inspect', { timeout_ms: 500, auto_ack: true })).body.messages, (m: any[]) => m.length >= 1);
    expect(JSON.parse(text(parked[0]))).toEqual({ job: 'slow', sleep: 1.5 });
    expect(parked[0].attributes).toMatchObject({ 'cai-dead-letter-original-id': ids[0], 'cai-dead-letter-source-subscription': 'job-runner', 'cai-dead-letter-delivery-attempts': '3' });
    const attempts = (await events()).filter((x) => x.job === 'slow').map((x) => x._cloudevent.deliveryattempt);
    expect(attempts).toEqual(['1', '2', '3']);
  });

  it("a function's 400 is permanent: one attempt, then straight to the dead-letter topic", { timeout: 30_000 }, async () => {
    await publish(d, c.member.token, p, 'jobs', [{ text: JSON.stringify({ job: 'bad', fail: true }), attributes: { datacontenttype: 'application/json' } }]);
    const fs = await until(() => history(d, c.member.token, p, 'on-job'), (f) => f.some((x: any) => x.http_status === 400 && x.status === 'dead_lettered'), 20_000);
    const bad = fs.find((x: any) => x.http_status === 400);
    expect(bad).toMatchObject({ status: 'dead_lettered', attempts: 1 });
    const parked = await until(async () => (await pull(d, c.member.token, p, 'parked', 'inspect', { timeout_ms: 500, auto_ack: true })).body.messages, (m: any[]) => m.length >= 1);
    expect(JSON.parse(text(parked[0]))).toMatchObject({ job: 'bad' });
    expect((await events()).filter((x) => x.job === 'bad')).toHaveLength(1);
  });

  it('refusals: an absent topic or subscription 404, one already consumed by another trigger 409; delete removes only the trigger\'s own subscription', async () => {
    expect((await create({ name: 'x1', source: { type: 'pubsub', pubsub: { topic: 'nope' } } })).status).toBe(404);
    expect((await create({ name: 'x2', source: { type: 'pubsub', pubsub: { topic: 'jobs', subscription: 'nope' } } })).status).toBe(404);
    const taken = await create({ name: 'x3', source: { type: 'pubsub', pubsub: { topic: 'jobs', subscription: 'job-runner' } } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatch(/already consumed by trigger on-job/);
    expect((await d.api('DELETE', `${triggersPath(p)}/on-order`, { token: c.member.token })).status).toBe(204);
    await until(async () => (await d.api('GET', subPath(p, 'orders', 'trigger-on-order'), { token: c.member.token })).status, (s) => s === 404);
    expect((await d.api('DELETE', `${triggersPath(p)}/on-job`, { token: c.member.token })).status).toBe(204);
    expect((await d.api('GET', subPath(p, 'jobs', 'job-runner'), { token: c.member.token })).status).toBe(200);
  });
});
