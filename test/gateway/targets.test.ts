import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfig, workloadConfigFromEnv } from '../../src/daemon/config.js';
import { archive, deployForm, HELLO_PY, langgraphSample, waitState } from '../agents/helpers.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeUser } from '../helpers/fixtures.js';
import { SERVER_PY } from '../serverless/data-helpers.js';
import { gw, sharedHost, viaHost } from './helpers.js';

// Each target kind reached through a published endpoint: function (and agent kind checks),
// serverless and container (a private service reached on the internal listener), pubsub (the
// project's messaging API with the endpoint's own credential), memorystore (refused: no HTTP face).
// Forwarding details: method, path, query, body, X-Forwarded-*, the endpoint's key kept at the
// edge, refusals never reaching the target, 504 for a slow target.
let d: TestDaemon;
let token: string;
let p: { id: string; short: string; slug: string };

beforeAll(async () => {
  d = await startTestDaemon({
    gateway: { ...gatewayConfig({}), targetTimeoutSeconds: 1 },
    workloads: { ...workloadConfigFromEnv({}), idleMs: 30_000, portMin: 38300, portMax: 38399 },
  });
  p = makeProject(d);
  const admin = await makeUser(d);
  grant(d, p.id, admin.id, 'admin');
  token = admin.token;
  const upload = await fetch(`${d.url}/v1/projects/${p.id}/services/sources`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/gzip' },
    body: archive({ 'main.py': SERVER_PY }),
  });
  expect(upload.status).toBe(201);
  const image = ((await upload.json()) as { image: string }).image;
  expect((await d.api('POST', `/v1/projects/${p.id}/services`, { token, body: { name: 'echo', image } })).status).toBe(202);
  const fn = await deployForm(d, token, { name: 'hello', framework: 'function', runtime: 'python' }, archive({ 'main.py': HELLO_PY }), `?project=${p.slug}`);
  expect(fn.status, JSON.stringify(fn.body)).toBe(202);
  const agent = await deployForm(d, token, { name: 'graph', framework: 'langgraph' }, archive(langgraphSample()), `?project=${p.slug}`);
  expect(agent.status, JSON.stringify(agent.body)).toBe(202);
  await waitState(d, token, 'hello', 'ready', p.slug, 90_000);
  await waitState(d, token, 'graph', 'ready', p.slug, 90_000);
  const deadline = Date.now() + 60_000;
  while (!(await d.api('GET', `/v1/projects/${p.id}/services/echo`, { token })).body.ready) {
    if (Date.now() > deadline) throw new Error('service echo never ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 150_000);
afterAll(async () => d?.close());

async function published(name: string, body: Record<string, unknown>) {
  const c = await d.api('POST', `${gw(p.id)}/endpoints`, { token, body: { name, ...body } });
  expect(c.status, c.text).toBe(201);
  if ((body.auth as any)?.mode === 'apikey') {
    const k = await d.api('POST', `${gw(p.id)}/endpoints/${name}/keys`, { token, body: {} });
    expect((await d.api('POST', `${gw(p.id)}/endpoints/${name}/publish`, { token })).status).toBe(200);
    return k.body.secret as string;
  }
  expect((await d.api('POST', `${gw(p.id)}/endpoints/${name}/publish`, { token })).status).toBe(200);
  return '';
}

describe('target kinds', { timeout: 60_000 }, () => {
  it('function: the request reaches the function (the platform invoke gate is replaced by the endpoint auth)', async () => {
    await published('fn', { target: { kind: 'function', name: 'hello' } });
    const r = await viaHost(d, sharedHost(d, 'fn', p.short), { method: 'POST', path: '/anything?q=1', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'via gateway' }) });
    expect(r.status, r.text).toBe(200);
    expect(r.body.reply).toBe('hello via gateway');
    // A target that dies mid-request is a 502 in the envelope.
    const dead = await viaHost(d, sharedHost(d, 'fn', p.short), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'crash' }) });
    expect(dead.status).toBe(502);
    expect(dead.body).toMatchObject({ error: expect.any(String), request_id: expect.stringMatching(/^req_/) });
    // The kind must match what the name is: hello is a function, not an agent.
    expect((await d.api('POST', `${gw(p.id)}/endpoints`, { token, body: { name: 'wrongkind', target: { kind: 'agent', name: 'hello' } } })).status).toBe(404);
  });

  it('agent: the request reaches the agent harness (its /invoke)', async () => {
    await published('bot', { target: { kind: 'agent', name: 'graph' } });
    const r = await viaHost(d, sharedHost(d, 'bot', p.short), { method: 'POST', path: '/invoke', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'weather' }) });
    expect(r.status, r.text).toBe(200);
    expect(r.body.output).toMatch(/facts about weather/);
    // A streamed answer streams through: NDJSON lines, the first before the last is written.
    const stream = await viaHost(d, sharedHost(d, 'bot', p.short), { method: 'POST', path: '/invoke/stream', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'rain' }) });
    expect(stream.status).toBe(200);
    expect(String(stream.headers['content-type'])).toMatch(/ndjson/);
    expect(stream.headers['content-length']).toBeUndefined();
    expect(stream.text.trim().split('\n').length).toBeGreaterThan(1);
    expect((await d.api('POST', `${gw(p.id)}/endpoints`, { token, body: { name: 'wrongkind2', target: { kind: 'function', name: 'graph' } } })).status).toBe(404);
  });

  it('serverless: method, path, query, body and X-Forwarded-* reach a private service; the endpoint key does not', async () => {
    const secret = await published('svc', { target: { kind: 'serverless', name: 'echo' }, auth: { mode: 'apikey' } });
    const host = sharedHost(d, 'svc', p.short);
    const big = 'x'.repeat(256 * 1024);
    const r = await viaHost(d, host, { method: 'POST', path: '/orders/7?expand=items', headers: { 'x-api-key': secret, 'x-custom': 'kept', 'content-type': 'text/plain' }, body: big });
    expect(r.status, r.text).toBe(200);
    expect(r.body.path).toBe('/orders/7?expand=items');
    expect(r.body.body.length).toBe(big.length);
    expect(r.body.headers).toMatchObject({ 'x-custom': 'kept', 'x-forwarded-proto': 'http', 'x-forwarded-host': `svc-${p.short}.gw.localhost` });
    // The client first; the serverless data plane appends the hop it saw (the gateway).
    expect(r.body.headers['x-forwarded-for']).toMatch(/^127\.0\.0\.1(, 127\.0\.0\.1)?$/);
    expect(r.body.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(r.body.headers)).not.toContain(secret);
    const viaBearer = await viaHost(d, host, { path: '/b', headers: { authorization: `Bearer ${secret}` } });
    expect(viaBearer.body.headers.authorization).toBeUndefined();
  });

  it('a refused request never reaches the target', async () => {
    const host = sharedHost(d, 'svc', p.short);
    expect((await viaHost(d, host, { path: '/refused-marker' })).status).toBe(401);
    const logs = await d.api('GET', `/v1/projects/${p.id}/services/echo/logs?tail=1000`, { token });
    expect(logs.status).toBe(200);
    expect(logs.text).toContain('served /orders/7');
    expect(logs.text).not.toContain('refused-marker');
  });

  it('a target that does not answer in time is a 504 in the envelope', async () => {
    await published('slow', { target: { kind: 'container', name: 'echo' } });
    const r = await viaHost(d, sharedHost(d, 'slow', p.short), { path: '/?ms=2500' });
    expect(r.status).toBe(504);
    expect(r.body).toMatchObject({ error: expect.stringMatching(/did not answer within 1 s/), request_id: expect.stringMatching(/^req_/) });
    expect((await viaHost(d, sharedHost(d, 'slow', p.short), { path: '/quick' })).status).toBe(200);
  });

  it("pubsub: the project's messaging API answers, called with the endpoint's own project credential", async () => {
    expect((await d.api('POST', `/v1/projects/${p.id}/topics`, { token, body: { name: 'orders' } })).status).toBe(201);
    await published('bus', { target: { kind: 'pubsub' } });
    const r = await viaHost(d, sharedHost(d, 'bus', p.short), { headers: { authorization: 'Bearer not-a-platform-token' } });
    expect(r.status, r.text).toBe(200);
    expect(JSON.stringify(r.body)).toContain('orders');
    // The credential is a member service account of the project, visible to its admins.
    const sas = await d.api('GET', `/v1/projects/${p.id}/service-accounts`, { token });
    expect(JSON.stringify(sas.body)).toMatch(/gw-bus-/);
    // Deleting the endpoint retires it.
    expect((await d.api('DELETE', `${gw(p.id)}/endpoints/bus`, { token })).status).toBe(204);
    expect(JSON.stringify((await d.api('GET', `/v1/projects/${p.id}/service-accounts`, { token })).body)).not.toMatch(/gw-bus-/);
  });

  it('memorystore: accepted as a kind, but failed with the reason, and requests get 501', async () => {
    const c = await d.api('POST', `${gw(p.id)}/endpoints`, { token, body: { name: 'cache', target: { kind: 'memorystore', name: 'sessions' } } });
    expect(c.status).toBe(201);
    const pub = await d.api('POST', `${gw(p.id)}/endpoints/cache/publish`, { token });
    expect(pub.body).toMatchObject({ state: 'failed', message: expect.stringMatching(/cannot carry/) });
    const r = await viaHost(d, sharedHost(d, 'cache', p.short));
    expect(r.status).toBe(501);
  });
});
