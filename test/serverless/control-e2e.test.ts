import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import Docker from 'dockerode';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { CRASH_PY, SERVER_PY } from './data-helpers.js';

const IMAGE = 'platform-python:local';
const engine = await DockerDriver.available();
const hasImage = engine && (await new Docker().getImage(IMAGE).inspect().then(() => true, () => false));
const dockerMissing = !engine ? 'no Docker engine answers' : !hasImage ? `image ${IMAGE} is missing` : '';
if (dockerMissing) console.warn(`SKIPPED: serverless control plane over docker: ${dockerMissing}`);

/**
 * The control plane over the daemon's real data plane: a source folder uploaded, created,
 * ready, served on its public address; a broken revision leaves traffic on the ready one with
 * the reason shown; a fixed one takes over; delete releases the address.
 */
let d: TestDaemon;
let people: Awaited<ReturnType<typeof cast>>;
let base: string;
beforeAll(async () => {
  const portMin = 38000 + Math.floor(Math.random() * 20) * 50;
  d = await startTestDaemon({ workloads: { ...workloadConfigFromEnv({}), idleMs: 60_000, restartBackoffMs: 200, deployTimeoutMs: 5000, portMin, portMax: portMin + 49 } });
  people = await cast(d);
  base = `/v1/projects/${people.project.id}/services`;
});
afterAll(() => d?.close());

const call = (method: string, path: string, body?: unknown) => d.api(method, `${base}${path}`, { token: people.member.token, body });

async function upload(files: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  for (const [f, c] of Object.entries(files)) writeFileSync(join(dir, f), c);
  const tgz = execFileSync('tar', ['-czf', '-', '-C', dir, '.']);
  rmSync(dir, { recursive: true, force: true });
  const r = await fetch(`${d.url}${base}/sources`, { method: 'POST', headers: { authorization: `Bearer ${people.member.token}`, 'content-type': 'application/gzip' }, body: tgz });
  expect(r.status).toBe(201);
  return ((await r.json()) as { image: string }).image;
}

/** Polls GET until the service satisfies `ok` (a client's --wait does the same). */
async function until(name: string, ok: (s: any) => boolean, ms = 45_000): Promise<any> {
  const end = Date.now() + ms;
  let s: any;
  while (Date.now() < end) {
    s = (await call('GET', `/${name}`)).body;
    if (ok(s)) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out; last: ${JSON.stringify(s)}`);
}

function viaHost(host: string, path = '/'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${d.url}${path}`, { headers: { host } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // plain text
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('control plane over the real data plane (source folders as processes)', { timeout: 180_000 }, () => {
  it('create -> ready -> served; a crashing revision keeps traffic on the ready one; a fixed one takes over; delete releases the address', async () => {
    const good = await upload({ 'main.py': SERVER_PY });
    const created = await call('POST', '', { name: 'e2e', image: good, env: { MSG: 'one' }, publish: { enabled: true } });
    expect(created.status).toBe(202);
    const t0 = Date.now();
    const ready = await until('e2e', (s) => s.ready);
    console.log(`create-to-ready through the API: ${Date.now() - t0} ms`);
    expect(ready).toMatchObject({ state: 'ready', latest_ready_revision: 'e2e-00001', observed_generation: 1 });
    const host = `e2e-${people.project.short}.apps.localhost:${d.port}`;
    const r1 = await viaHost(host);
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ revision: 'e2e-00001', msg: 'one' });

    const broken = await upload({ 'main.py': CRASH_PY });
    expect((await call('PATCH', '/e2e', { image: broken })).body.latest_created_revision).toBe('e2e-00002');
    const degraded = await until('e2e', (s) => s.state === 'degraded');
    expect(degraded.message).toMatch(/e2e-00002 is not ready/);
    expect(degraded.message).toMatch(/traffic stays on e2e-00001/);
    const rev2 = (await call('GET', '/e2e/revisions')).body.revisions[0];
    expect(rev2).toMatchObject({ name: 'e2e-00002', state: 'not_ready', ready: false });
    expect(rev2.message).toEqual(expect.any(String));
    console.log('broken revision reported:', rev2.reason, '-', rev2.message);
    expect((await viaHost(host)).body.revision).toBe('e2e-00001');

    await call('PATCH', '/e2e', { image: good, env: { MSG: 'three' } });
    const fixed = await until('e2e', (s) => s.ready && s.latest_ready_revision === 'e2e-00003');
    expect(fixed.active_traffic).toEqual([{ revision_name: 'e2e-00003', percent: 100 }]);
    const r3 = await viaHost(host);
    expect(r3.body).toMatchObject({ revision: 'e2e-00003', msg: 'three' });

    const m = (await call('GET', '/e2e/metrics')).body;
    expect(m.instances.current).toBeGreaterThanOrEqual(1);
    const logs = await call('GET', '/e2e/logs?tail=5');
    expect(logs.status).toBe(200);
    expect(logs.text).toMatch(/served \//);

    expect((await d.api('DELETE', `${base}/e2e`, { token: people.admin.token })).status).toBe(204);
    // The address is released: no service answers it (the agents' router, next in line, refuses it).
    const gone = await viaHost(host);
    expect([401, 404]).toContain(gone.status);
    expect(gone.body.revision).toBeUndefined();
  });
});

describe.skipIf(Boolean(dockerMissing))('control plane over the real data plane (docker images)', { timeout: 180_000 }, () => {
  it('an image runs with its command; a missing image leaves traffic on the ready revision with the pull failure shown', async () => {
    const created = await call('POST', '', { name: 'img', image: IMAGE, command: ['python3', '-u', '-c'], args: [SERVER_PY], env: { MSG: 'docker' }, publish: { enabled: true } });
    expect(created.status).toBe(202);
    const t0 = Date.now();
    await until('img', (s) => s.ready);
    console.log(`create-to-ready through the API (docker): ${Date.now() - t0} ms`);
    const host = `img-${people.project.short}.apps.localhost:${d.port}`;
    expect((await viaHost(host)).body).toMatchObject({ revision: 'img-00001', msg: 'docker' });

    await call('PATCH', '/img', { image: 'registry.invalid/nothing/here:1' });
    const degraded = await until('img', (s) => s.state === 'degraded', 90_000);
    expect(degraded.message).toMatch(/img-00002 is not ready \(ImagePullFailed\)/);
    expect(degraded.message).toMatch(/traffic stays on img-00001/);
    expect(degraded.conditions.find((c: { type: string }) => c.type === 'ServiceReady')).toMatchObject({ status: 'False', reason: 'ImagePullFailed' });
    expect((await viaHost(host)).body.revision).toBe('img-00001');
    expect((await d.api('DELETE', `${base}/img`, { token: people.admin.token })).status).toBe(204);
  });
});
