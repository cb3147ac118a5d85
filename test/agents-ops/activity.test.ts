import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { waitState } from '../agents/helpers.js';
import { deployAgent } from '../knowledge/fixtures.js';
import { gw, sharedHost, viaHost } from '../gateway/helpers.js';

/** GET /v1/agents/{name}/metrics and /users, from real invokes of a deployed function. */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let q: string;
const SESSION = (n: number) => `session-${n}-${'x'.repeat(24)}`;

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
  q = `?project=${c.project.slug}`;
  await deployAgent(d, c.member.token, 'busy', c.project.slug);
  await waitState(d, c.member.token, 'busy', 'ready', c.project.slug, 60_000);
  const invoke = (message: string, user_id: string, session_id: string) => d.api('POST', `/v1/agents/busy/invoke${q}`, { body: { message, user_id, session_id } });
  expect((await invoke('one', 'alice', SESSION(1))).status).toBe(200);
  expect((await invoke('two', 'alice', SESSION(1))).status).toBe(200);
  expect((await invoke('three', 'alice', SESSION(2))).status).toBe(200);
  expect((await invoke('raise', 'bob@example.test', SESSION(3))).status).toBeGreaterThanOrEqual(500);
  expect((await d.api('POST', `/v1/agents/busy/invoke${q}`, { raw: '[1]', headers: { 'content-type': 'application/json' } })).status).toBe(400);
}, 90_000);
afterAll(async () => d?.close());

describe('agent metrics and users', () => {
  it('metrics: invocations, errors, p50/p95 latency and instances over the window', async () => {
    const r = await d.api('GET', `/v1/agents/busy/metrics${q}`, { token: c.member.token });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ agent: 'busy', window_seconds: 3600, invocations: 5, errors: 1, client_errors: 1, error_rate: 0.2, instances: 1 });
    expect(r.body.latency_ms.p50).toBeGreaterThan(0);
    expect(r.body.latency_ms.p95).toBeGreaterThanOrEqual(r.body.latency_ms.p50);
    const narrow = await d.api('GET', `/v1/agents/busy/metrics${q}&window_seconds=1`, { token: c.member.token });
    expect(narrow.body.window_seconds).toBe(1);
    expect((await d.api('GET', `/v1/agents/busy/metrics${q}&window_seconds=0`, { token: c.member.token })).status).toBe(400);
    expect((await d.api('GET', `/v1/agents/busy/metrics${q}&window_seconds=1h`, { token: c.member.token })).status).toBe(400);
  });

  it('users: end users seen with their session counts, most recent first, paged', async () => {
    const r = await d.api('GET', `/v1/agents/busy/users${q}`, { token: c.member.token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.users.map((u: any) => [u.user_id, u.sessions, u.invocations])).toEqual([
      ['bob@example.test', 1, 1],
      ['alice', 2, 3],
    ]);
    const p1 = await d.api('GET', `/v1/agents/busy/users${q}&page_size=1`, { token: c.member.token });
    expect(p1.body.users).toHaveLength(1);
    const p2 = await d.api('GET', `/v1/agents/busy/users${q}&page_size=1&page_token=${p1.body.next_page_token}`, { token: c.member.token });
    expect(p2.body.users.map((u: any) => u.user_id)).toEqual(['alice']);
    expect(p2.body.next_page_token).toBe('');
  });

  it('owner rights: admin reads, outsiders and unknown agents 404, anonymous 401', async () => {
    for (const path of ['metrics', 'users']) {
      expect((await d.api('GET', `/v1/agents/busy/${path}${q}`, { token: c.admin.token })).status).toBe(200);
      expect((await d.api('GET', `/v1/agents/busy/${path}${q}`, { token: c.outsider.token })).status).toBe(404);
      expect((await d.api('GET', `/v1/agents/ghost/${path}${q}`, { token: c.member.token })).status).toBe(404);
      expect((await d.api('GET', `/v1/agents/busy/${path}${q}`)).status).toBe(401);
    }
  });

  it('invokes through the public address and through a gateway route count in the same metrics', async () => {
    const metrics = async () => (await d.api('GET', `/v1/agents/busy/metrics${q}`, { token: c.member.token })).body.invocations as number;
    const before = await metrics();
    const json = { 'content-type': 'application/json' };
    const direct = await viaHost(d, `busy-${c.project.short}.apps.localhost:${d.port}`, { method: 'POST', path: '/', headers: json, body: JSON.stringify({ message: 'public' }) });
    expect(direct.status, direct.text).toBe(200);
    expect((await d.api('POST', `${gw(c.project.id)}/endpoints`, { token: c.admin.token, body: { name: 'busy-route', target: { kind: 'function', name: 'busy' } } })).status).toBe(201);
    expect((await d.api('POST', `${gw(c.project.id)}/endpoints/busy-route/publish`, { token: c.admin.token })).status).toBe(200);
    const routed = await viaHost(d, sharedHost(d, 'busy-route', c.project.short), { method: 'POST', path: '/', headers: json, body: JSON.stringify({ message: 'gateway' }) });
    expect(routed.status, routed.text).toBe(200);
    expect(routed.body.reply).toBe('hello gateway');
    expect(await metrics()).toBe(before + 2);
  });

  it('a trigger delivery to the function counts in its metrics too', async () => {
    const metrics = async () => (await d.api('GET', `/v1/agents/busy/metrics${q}`, { token: c.member.token })).body.invocations as number;
    const before = await metrics();
    const triggers = `/v1/projects/${c.project.id}/triggers`;
    const made = await d.api('POST', triggers, {
      token: c.member.token,
      body: { name: 'busy-tick', target: { service: 'busy' }, source: { type: 'schedule', schedule: { cron: '0 0 1 1 *', payload: '{"message":"tick"}' } }, retry: { max_attempts: 1 } },
    });
    expect(made.status, made.text).toBe(202);
    expect((await d.api('POST', `${triggers}/busy-tick:fire`, { token: c.member.token })).status).toBe(202);
    const deadline = Date.now() + 20_000;
    let status: string | undefined;
    while (Date.now() < deadline) {
      status = (await d.api('GET', `${triggers}/busy-tick`, { token: c.member.token })).body.firings?.[0]?.status;
      if (status === 'succeeded' || status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('succeeded');
    expect(await metrics()).toBe(before + 1);
  });
});
