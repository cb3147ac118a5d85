import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { archive } from '../agents/helpers.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { SERVER_PY, sleep } from './data-helpers.js';

/**
 * End to end through the daemon's HTTP API and its real data plane: a source folder uploaded,
 * created as a published service, ready, served on its public address by the Host router (ahead
 * of the agents' router), on its internal path form, a second revision split 50/50 with a tag,
 * logs and metrics; unpublishing makes the public address absent.
 */
let d: TestDaemon;
let people: Awaited<ReturnType<typeof cast>>;
let base: string;
beforeAll(async () => {
  d = await startTestDaemon({ workloads: { ...workloadConfigFromEnv({}), idleMs: 30_000, portMin: 37500, portMax: 37599 } });
  people = await cast(d);
  base = `/v1/projects/${people.project.id}/services`;
});
afterAll(async () => d?.close());

const api = (method: string, path: string, body?: unknown) => d.api(method, `${base}${path}`, { token: people.member.token, body });

async function waitReady(name: string, revision: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = (await api('GET', `/${name}`)).body;
    if (s.ready && s.latest_ready_revision === revision) return s;
    if (Date.now() > deadline) throw new Error(`not ready: ${JSON.stringify(s)}`);
    await sleep(50);
  }
}

async function viaHost(host: string, path = '/') {
  const res = await request(`${d.url}${path}`, { headers: { host } });
  const text = await res.body.text();
  return { status: res.statusCode, body: text.startsWith('{') ? JSON.parse(text) : text };
}

describe('serverless services end to end', { timeout: 180_000 }, () => {
  it('uploads a folder, serves it on its public, tag and internal addresses, splits, logs and measures', async () => {
    const upload = async (msg: string) => {
      const res = await fetch(`${d.url}${base}/sources`, {
        method: 'POST',
        headers: { authorization: `Bearer ${people.member.token}`, 'content-type': 'application/gzip' },
        body: archive({ 'main.py': SERVER_PY.replace("msg=os.environ.get('MSG', '')", `msg='${msg}'`) }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { image: string }).image;
    };
    const first = await upload('first');
    expect(first).toMatch(new RegExp(`^source\\.platform\\.local/${people.project.short}/sha256-[0-9a-f]{64}$`));
    const t0 = performance.now();
    const created = await api('POST', '', { name: 'shop', image: first, publish: { enabled: true } });
    expect(created.status).toBe(202);
    const s1 = await waitReady('shop', 'shop-00001');
    console.log(`create-to-ready (source folder, process): ${(performance.now() - t0).toFixed(0)} ms`);
    const host = new URL(s1.url).host;
    const one = await viaHost(host, '/hello?x=1');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ msg: 'first', revision: 'shop-00001', path: '/hello?x=1' });
    expect(one.body.headers['x-forwarded-host']).toBe(host);

    // The internal address, on the internal listener, prefix stripped.
    const internal = new URL(s1.internal_url);
    const inside = (await (await fetch(`${d.internalUrl}${internal.pathname}/in`)).json()) as any;
    expect(inside).toMatchObject({ msg: 'first', path: '/in' });
    expect(inside.headers['x-forwarded-prefix']).toBe(internal.pathname);

    // A second revision, split 50/50, the first tagged.
    const second = await upload('second');
    expect((await api('PATCH', '/shop', { image: second })).status).toBe(200);
    await waitReady('shop', 'shop-00002');
    const split = await api('POST', '/shop:set-traffic', { traffic: [{ revision_name: 'shop-00001', percent: 50, tag: 'old' }, { latest_revision: true, percent: 50 }] });
    expect(split.status).toBe(202);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 200; i++) {
      const r = await viaHost(host);
      counts[r.body.msg] = (counts[r.body.msg] ?? 0) + 1;
    }
    console.log('end-to-end 50/50 split over 200 requests:', counts);
    expect(Math.abs((counts.first ?? 0) - 100)).toBeLessThanOrEqual(10);
    expect((await viaHost(`old-${host}`)).body.msg).toBe('first');

    const metrics = (await api('GET', '/shop/metrics')).body;
    expect(metrics.revisions.find((r: any) => r.name === 'shop-00001').replicas).toBeGreaterThanOrEqual(1);
    const logs = await d.api('GET', `${base}/shop/logs?tail=3`, { token: people.member.token });
    expect(logs.status).toBe(200);
    expect(logs.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(logs.text.trim().split('\n')).toHaveLength(3);

    // Unpublished: the public address is absent (the agents' router answers as for any unknown name).
    expect((await api('PATCH', '/shop', { publish: { enabled: false } })).status).toBe(200);
    expect((await viaHost(host)).status).not.toBe(200);
    expect((await fetch(`${d.internalUrl}${internal.pathname}/`)).status).toBe(200);
    expect((await d.api('DELETE', `${base}/shop`, { token: people.admin.token })).status).toBe(204);
    expect((await fetch(`${d.internalUrl}${internal.pathname}/`)).status).toBe(404);
  });
});
