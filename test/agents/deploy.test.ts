import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { HELLO_PY, archive, deployForm, waitState } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
});
afterAll(async () => d?.close());

describe('deploy a python function through HTTP', () => {
  it('builds, deploys, becomes ready and answers invoke', async () => {
    const t0 = Date.now();
    const r = await deployForm(d, c.member.token, { name: 'hello', framework: 'function', runtime: 'python' }, archive({ 'main.py': HELLO_PY }), `?project=${c.project.slug}`);
    expect(r.status).toBe(202);
    expect(r.body.build_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.agent).toMatchObject({ name: 'hello', state: 'building', ready: false, kind: 'function', framework: 'function', runtime: 'python', owner: c.member.email });
    const ready = await waitState(d, c.member.token, 'hello', 'ready', c.project.slug);
    const elapsed = Date.now() - t0;
    console.log(`deploy-to-ready (python function, process driver): ${elapsed} ms`);
    expect(ready).toMatchObject({ ready: true, latest_revision: 'hello-00001', public_url: `http://hello-${c.project.short}.apps.localhost:${d.port}` });
    expect(ready.image).toMatch(new RegExp(`^local/${c.project.short}/hello@sha256:[0-9a-f]{64}$`));
    expect(ready.message).toBeUndefined();

    const inv = await d.api('POST', `/v1/agents/hello/invoke?project=${c.project.slug}`, { body: { message: 'hi', extra: 'dropped', session_id: 'abcdefghijklmnopqrstuvwxyz' } });
    expect(inv.status).toBe(200);
    expect(inv.body.reply).toBe('hello hi');
    // Only the four fields survive; ids filled where the handler did not set them.
    expect(inv.body.keys).toEqual(['message', 'session_id', 'user_id']);
    expect(inv.body.session_id).toBe('abcdefghijklmnopqrstuvwxyz');
    expect(inv.body.user_id).toBe('anonymous');
  });

  it('passes the handler JSON through: statusCode as status, ids only when absent', async () => {
    const s = await d.api('POST', `/v1/agents/hello/invoke?project=${c.project.slug}`, { body: { message: 'status' } });
    expect(s.status).toBe(201);
    expect(s.body).toMatchObject({ statusCode: 201, created: true });
    expect(s.body.session_id).toHaveLength(32);
    const ids = await d.api('POST', `/v1/agents/hello/invoke?project=${c.project.slug}`, { body: { message: 'ids' } });
    expect(ids.body).toEqual({ session_id: 'mine', reply: 'kept', user_id: 'anonymous' });
    expect(ids.body.output).toBeUndefined();
  });

  it('an anonymous caller choosing a session id needs 24 characters', async () => {
    const r = await d.api('POST', `/v1/agents/hello/invoke?project=${c.project.slug}`, { body: { message: 'x', session_id: 'short-guessable' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/at least 24 unguessable characters/);
    const signedIn = await d.api('POST', `/v1/agents/hello/invoke?project=${c.project.slug}`, { token: c.member.token, body: { message: 'x', session_id: 'short' } });
    expect(signedIn.body.session_id).toBe('short');
    expect(signedIn.body.user_id).toBe(c.member.email);
  });

  it('answers 500 handler raised from a raising handler', async () => {
    const r = await d.api('POST', `/v1/agents/hello/invoke?project=${c.project.slug}`, { body: { message: 'raise' } });
    expect(r.status).toBe(500);
    expect(r.body.error).toMatch(/^handler raised/);
  });

  it('streams NDJSON from a function', async () => {
    const res = await fetch(`${d.url}/v1/agents/hello/invoke/stream?project=${c.project.slug}`, { method: 'POST', body: JSON.stringify({ message: 'x' }), headers: { 'content-type': 'application/json' } });
    expect(res.headers.get('content-type')).toMatch(/ndjson/);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0].reply).toBe('hello x');
  });

  it('injects the workload environment', async () => {
    const r = await d.api('POST', `/v1/agents/hello/invoke?project=${c.project.slug}`, { body: { message: 'env' } });
    expect(r.body).toMatchObject({
      AGENT_NAME: 'hello',
      PROJECT_SHORT: c.project.short,
      SVC_API_URL: d.url,
      SVC_PROJECT_ID: c.project.id,
      PLATFORM_REQUEST_TIMEOUT_SECONDS: '60',
    });
    expect(r.body.SVC_PROJECT_KEY).toMatch(/^svc_wl_/);
    expect(Number(r.body.PORT)).toBeGreaterThan(0);
  });

  it('serves the public address by Host header', async () => {
    const host = `hello-${c.project.short}.apps.localhost:${d.port}`;
    const { request } = await import('undici');
    const r = await request(`${d.url}/anything?q=1`, { method: 'POST', headers: { host, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'public' }) });
    expect(r.statusCode).toBe(200);
    expect(((await r.body.json()) as any).reply).toBe('hello public');
    const h = await request(`${d.url}/healthz`, { headers: { host } });
    expect(await h.body.json()).toEqual({ status: 'ok' });
    const none = await request(`${d.url}/`, { headers: { host: `nope-${c.project.short}.apps.localhost` } });
    expect(none.statusCode).toBe(404);
    await none.body.dump();
  });

  it('stores the source as editable files', async () => {
    const q = `?project=${c.project.slug}`;
    const list = await d.api('GET', `/v1/agents/hello/files${q}`, { token: c.member.token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ agent: 'hello', editable: true, files: [{ path: 'main.py', size: HELLO_PY.length }] });
    const one = await d.api('GET', `/v1/agents/hello/files/main.py${q}`, { token: c.member.token });
    expect(one.body.content).toBe(HELLO_PY);
    const put = await d.api('PUT', `/v1/agents/hello/files/lib/util.py${q}`, { token: c.member.token, body: { content: 'X = 1\n' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ path: 'lib/util.py', size: 6 });
    const bad = await d.api('PUT', `/v1/agents/hello/files/..%2Fescape.py${q}`, { token: c.member.token, body: { content: 'x' } });
    expect(bad.status).toBe(400);
    const del = await d.api('DELETE', `/v1/agents/hello/files/lib/util.py${q}`, { token: c.member.token });
    expect(del.body).toEqual({ path: 'lib/util.py', deleted: true });
    expect((await d.api('GET', `/v1/agents/hello/files/lib/util.py${q}`, { token: c.member.token })).status).toBe(404);
  });

  it('redeploys from stored source and rolls revisions on env and secret changes', async () => {
    const q = `?project=${c.project.slug}`;
    const put = await d.api('PUT', `/v1/agents/hello/files/main.py${q}`, { token: c.member.token, body: { content: HELLO_PY.replace('"hello "', '"hey "') } });
    expect(put.status).toBe(200);
    const re = await d.api('POST', `/v1/agents/hello/redeploy${q}`, { token: c.member.token });
    expect(re.status).toBe(202);
    expect(re.body).toMatchObject({ files: 1, agent: { state: 'building' } });
    expect(re.body.note).toMatch(/1 stored file/);
    await waitState(d, c.member.token, 'hello', 'ready', c.project.slug);
    expect((await d.api('POST', `/v1/agents/hello/invoke${q}`, { body: { message: 'again' } })).body.reply).toBe('hey again');

    const env = await d.api('PATCH', `/v1/agents/hello/env${q}`, { token: c.member.token, body: { set: { GREETING: 'salut', CHAT_MODEL: 'tiny' } } });
    expect(env.status).toBe(200);
    expect(env.body).toEqual({ agent: 'hello', env_updated: 2, env: { GREETING: 'salut', CHAT_MODEL: 'tiny' } });
    const sec = await d.api('PATCH', `/v1/agents/hello/secrets${q}`, { token: c.member.token, body: { set: { API_TOKEN: 's3cret', MODEL_API_KEY: 'mk' } } });
    expect(sec.body).toEqual({ agent: 'hello', secrets_updated: 2, keys: ['API_TOKEN', 'MODEL_API_KEY'] });
    const keys = await d.api('GET', `/v1/agents/hello/secrets${q}`, { token: c.member.token });
    expect(keys.body).toEqual({ agent: 'hello', keys: ['API_TOKEN', 'MODEL_API_KEY'] });
    expect(keys.text).not.toContain('s3cret');
    const seen = await d.api('POST', `/v1/agents/hello/invoke${q}`, { body: { message: 'env' } });
    expect(seen.body).toMatchObject({ GREETING: 'salut', API_TOKEN: 's3cret', MODEL_API_KEY: 'mk', CHAT_MODEL: 'tiny' });

    const revs = await d.api('GET', `/v1/agents/hello/revisions${q}`, { token: c.member.token });
    expect(revs.status).toBe(200);
    expect(revs.body.revisions.map((r: any) => [r.name, r.reason])).toEqual([
      ['hello-00004', 'secrets'],
      ['hello-00003', 'env'],
      ['hello-00002', 'redeploy'],
      ['hello-00001', 'deploy'],
    ]);
    expect(revs.body.revisions[0].secret_keys).toEqual(['API_TOKEN', 'MODEL_API_KEY']);
    expect(revs.body.next_page_token).toBe('');
    const agent = await d.api('GET', `/v1/agents/hello${q}`, { token: c.member.token });
    expect(agent.body.latest_revision).toBe('hello-00004');

    const put2 = await d.api('PUT', `/v1/agents/hello/secrets${q}`, { token: c.member.token, body: { ONLY: 'one', EMPTY: '' } });
    expect(put2.body).toEqual({ agent: 'hello', secrets_updated: 1 });
    const rm = await d.api('PATCH', `/v1/agents/hello/env${q}`, { token: c.member.token, body: { remove: ['GREETING'], set: { CHAT_MODEL: '' } } });
    expect(rm.body.env).toEqual({});
  });

  it('a config change rolls a config revision and the next request serves it', async () => {
    const q = `?project=${c.project.slug}`;
    const get = await d.api('GET', `/v1/agents/hello/config${q}`, { token: c.member.token });
    expect(get.status).toBe(200);
    expect(get.body).toEqual({ agent: 'hello', config: {} });
    const before = (await d.api('GET', `/v1/agents/hello${q}`, { token: c.member.token })).body.latest_revision as string;
    const patch = await d.api('PATCH', `/v1/agents/hello/config${q}`, { token: c.member.token, body: { timeout_seconds: 5000, instance_size: 'small' } });
    expect(patch.status).toBe(200);
    const seq = Number(before.split('-').pop()) + 1;
    expect(patch.body).toEqual({ agent: 'hello', config: { timeout_seconds: 5000, instance_size: 'small' }, config_updated: 2, latest_revision: `hello-${String(seq).padStart(5, '0')}` });
    // Clamped at 900 when used, never rejected (spec 1 §8.5).
    expect((await d.api('POST', `/v1/agents/hello/invoke${q}`, { body: { message: 'env' } })).body.PLATFORM_REQUEST_TIMEOUT_SECONDS).toBe('900');
    const revs = await d.api('GET', `/v1/agents/hello/revisions${q}&page_size=1`, { token: c.member.token });
    expect(revs.body.revisions[0]).toMatchObject({ reason: 'config', config: { timeout_seconds: 5000, instance_size: 'small' } });
    const same = await d.api('PATCH', `/v1/agents/hello/config${q}`, { token: c.member.token, body: { instance_size: 'small' } });
    expect(same.body).toMatchObject({ config_updated: 0, latest_revision: patch.body.latest_revision });
    for (const [body, msg] of [
      [{}, /empty config/],
      [{ colour: 1 }, /unknown body field: colour/],
      [{ instance_size: 'huge' }, /instance_size/],
    ] as const) {
      const r = await d.api('PATCH', `/v1/agents/hello/config${q}`, { token: c.member.token, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatch(msg);
    }
    expect((await d.api('PATCH', `/v1/agents/hello/config${q}`, { token: c.member.token, body: { timeout_seconds: 60 } })).status).toBe(200);
  });

  it('redeploy without stored source is a 400', async () => {
    const q = `?project=${c.project.slug}`;
    expect((await deployForm(d, c.member.token, { name: 'empty', framework: 'function' }, archive({ 'main.py': HELLO_PY }), q)).status).toBe(202);
    await waitState(d, c.member.token, 'empty', 'ready', c.project.slug);
    expect((await d.api('DELETE', `/v1/agents/empty/files/main.py${q}`, { token: c.member.token })).status).toBe(200);
    const r = await d.api('POST', `/v1/agents/empty/redeploy${q}`, { token: c.member.token });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/no stored source/);
  });

  it('persists log history with revision, instance and stream', async () => {
    const q = `?project=${c.project.slug}`;
    const h = await d.api('GET', `/v1/agents/hello/logs/history${q}`, { token: c.member.token });
    expect(h.status).toBe(200);
    expect(h.body.count).toBe(h.body.lines.length);
    const handled = h.body.lines.find((l: any) => l.message === 'handling hi');
    expect(handled).toMatchObject({ stream: 'stdout', revision: 'hello-00001' });
    expect(handled.instance).toMatch(/^hello-00001-/);
    const limited = await d.api('GET', `/v1/agents/hello/logs/history${q}&limit=2&since=garbage`, { token: c.member.token });
    expect(limited.body.lines).toHaveLength(2);
    expect(limited.body.note).toMatch(/ignored/);
    const future = await d.api('GET', `/v1/agents/hello/logs/history${q}&since=2999-01-01T00:00:00Z`, { token: c.member.token });
    expect(future.body.count).toBe(0);
    const live = await d.api('GET', `/v1/agents/hello/logs${q}`, { token: c.member.token });
    expect(live.status).toBe(200);
    expect(live.headers.get('content-type')).toMatch(/text\/plain/);
  });
});
