import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { archive, HELLO_PY } from '../agents/helpers.js';
import { call, until } from './api.js';
import { parsePrometheusText, valueOf, type Family } from './prom-text.js';

/**
 * `/metrics` of the real daemon process (issue 24 §3): Prometheus text a strict parser accepts,
 * the listed series present, counters and gauges moving with the work done between two scrapes,
 * and only platform admins served (403 for other people, 401 without a credential).
 */
const home = mkdtempSync(join(tmpdir(), 'platform-metrics-'));
let d: DaemonProcess;
let admin: string;
let project: { id: string; short: string };

beforeAll(async () => {
  if (!existsSync(DAEMON_MAIN)) return;
  d = await spawnDaemonProcess(home, { PLATFORM_VECTOR_COUNT_REFRESH_SECONDS: '1' });
  admin = await loginToken(d.url);
  project = (await call(d.url, 'GET', '/v1/projects/default', admin)).body;
}, 30_000);

afterAll(async () => {
  if (d) {
    d.child.kill('SIGTERM');
    await d.exited;
  }
  rmSync(home, { recursive: true, force: true });
});

async function scrape(token = admin): Promise<Map<string, Family>> {
  const res = await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

const invoke = async () => {
  const r = await call(d.url, 'POST', '/v1/agents/hello/invoke', admin, { message: 'metrics' });
  expect(r.status, r.text).toBe(200);
};

describe.skipIf(!existsSync(DAEMON_MAIN))('/metrics', () => {
  it('parses strictly, has every listed series, and the counters and gauges move', { timeout: 90_000 }, async () => {
    // A function, a topic with a subscription, a vector index with points and a cache instance.
    const form = new FormData();
    form.append('name', 'hello');
    form.append('framework', 'function');
    form.append('runtime', 'python');
    form.append('code', new Blob([new Uint8Array(archive({ 'main.py': HELLO_PY }))]), 'code.tar.gz');
    const deployed = await fetch(`${d.url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
    expect(deployed.status, await deployed.text()).toBe(202);
    const topics = `/v1/projects/${project.id}/topics`;
    expect((await call(d.url, 'POST', topics, admin, { name: 'orders' })).status).toBe(201);
    await until('topic ready', async () => (await call(d.url, 'GET', `${topics}/orders`, admin)).body.state === 'ready');
    expect((await call(d.url, 'POST', `${topics}/orders/subscriptions`, admin, { name: 'audit' })).status).toBe(201);
    await until('subscription ready', async () => (await call(d.url, 'GET', `${topics}/orders/subscriptions/audit`, admin)).body.state === 'ready');
    const indexes = `/v1/projects/${project.id}/indexes`;
    expect((await call(d.url, 'POST', indexes, admin, { name: 'docs', dimensions: 3 })).status).toBe(201);
    await until('index ready', async () => (await call(d.url, 'GET', `${indexes}/docs`, admin)).body.index.ready === true);
    const points = [1, 2, 3].map((id) => ({ id, vector: [id, 1, 0], payload: {} }));
    expect((await call(d.url, 'POST', `${indexes}/docs:upsert`, admin, { points })).status).toBe(200);
    const caches = `/v1/projects/${project.id}/memorystores`;
    const cache = await call(d.url, 'POST', caches, admin, { name: 'sessions', persistence: { enabled: false } });
    expect(cache.status, cache.text).toBeLessThan(300);
    await until('cache ready', async () => (await call(d.url, 'GET', `${caches}/sessions`, admin)).body.ready === true, 30_000);
    await until('function ready', async () => (await call(d.url, 'GET', '/v1/agents/hello', admin)).body.state === 'ready', 60_000);
    await invoke();

    const first = await scrape();
    for (const name of [
      'platform_http_requests_total',
      'platform_http_request_duration_seconds',
      'platform_workloads',
      'platform_workload_instances',
      'platform_cold_starts_total',
      'platform_cold_start_seconds',
      'platform_messaging_backlog_messages',
      'platform_vector_points',
      'platform_cache_memory_bytes',
      'platform_sandbox_pool',
    ]) {
      expect(first.get(name)?.samples.length, `${name} has samples`).toBeGreaterThan(0);
    }
    // The route label is the template: no path parameter value ever becomes a label.
    const routes = first.get('platform_http_requests_total')!.samples.map((s) => s.labels.route!);
    expect(routes).toContain('/v1/agents/{name}/invoke');
    expect(routes.filter((r) => /hello|orders|docs|sessions|[0-9a-f]{8}-/.test(r))).toEqual([]);
    const invokes = { method: 'POST', route: '/v1/agents/{name}/invoke', status: '200' };
    const before = valueOf(first, 'platform_http_requests_total', 'platform_http_requests_total', invokes)!;
    expect(before).toBeGreaterThanOrEqual(1);
    expect(valueOf(first, 'platform_workloads', 'platform_workloads', { kind: 'function', state: 'ready' })).toBe(1);
    expect(valueOf(first, 'platform_workload_instances', 'platform_workload_instances', { kind: 'function' })).toBe(1);
    expect(valueOf(first, 'platform_cold_starts_total', 'platform_cold_starts_total', { kind: 'function' })).toBeGreaterThanOrEqual(1);
    const backlog = { project: project.short, topic: 'orders', subscription: 'audit' };
    expect(valueOf(first, 'platform_messaging_backlog_messages', 'platform_messaging_backlog_messages', backlog)).toBe(0);
    expect(valueOf(first, 'platform_cache_memory_bytes', 'platform_cache_memory_bytes', { project: project.short, cache: 'sessions' })).toBeGreaterThan(0);

    await invoke();
    await invoke();
    const published = await call(d.url, 'POST', `${topics}/orders:publish`, admin, { messages: [1, 2, 3, 4, 5].map((n) => ({ text: `m${n}` })) });
    expect(published.status).toBe(200);
    let second = await scrape();
    // Index counts refresh on their interval (1 s here), like the index views.
    await until('vector points counted', async () => (valueOf((second = await scrape()), 'platform_vector_points', 'platform_vector_points', { project: project.short, index: 'docs' }) ?? 0) === 3);
    expect(valueOf(second, 'platform_http_requests_total', 'platform_http_requests_total', invokes)).toBe(before + 2);
    const count = (f: Map<string, Family>) => valueOf(f, 'platform_http_request_duration_seconds', 'platform_http_request_duration_seconds_count', invokes)!;
    expect(count(second)).toBe(count(first) + 2);
    expect(valueOf(second, 'platform_messaging_backlog_messages', 'platform_messaging_backlog_messages', backlog)).toBe(5);
    // The scrape counts itself: the route is served and recorded like any other.
    expect(valueOf(second, 'platform_http_requests_total', 'platform_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(2);
  });

  it('is for platform admins: 401 without a credential, 403 for another person, 200 with an admin API key', async () => {
    expect((await fetch(`${d.url}/metrics`)).status).toBe(401);
    const email = 'watcher@example.test';
    expect((await call(d.url, 'POST', '/v1/users', admin, { email, password: 'Temp-Password-123' })).status).toBe(201);
    let user = await loginToken(d.url, { email, password: 'Temp-Password-123' });
    const changed = await call(d.url, 'POST', '/v1/auth/change-password', user, { current_password: 'Temp-Password-123', new_password: 'Watcher-Password-456' });
    expect(changed.status, changed.text).toBeLessThan(300);
    user = await loginToken(d.url, { email, password: 'Watcher-Password-456' });
    const refused = await call(d.url, 'GET', '/metrics', user);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'this action requires the platform admin role', request_id: expect.any(String) });
    const key = await call(d.url, 'POST', '/v1/users/me/keys', admin, { display_name: 'prometheus' });
    expect(key.status, key.text).toBe(201);
    const families = await scrape(key.body.secret);
    expect(families.get('platform_http_requests_total')).toBeDefined();
  });
});
