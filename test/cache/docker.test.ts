import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cast } from '../helpers/fixtures.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { CACHE_IMAGE as IMAGE, base, createInstance, dockerSkipReason, haveRedisCli, instanceRow, redisCli, startCacheDaemon, waitFor, waitState } from './helpers.js';

const docker = new Docker();

const skipReason = await dockerSkipReason();
if (skipReason) console.warn(`SKIPPED cache docker-driver tests: ${skipReason}`);

describe.skipIf(Boolean(skipReason))('cache instances under the docker driver', () => {
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;

  beforeAll(async () => {
    d = await startCacheDaemon({ driver: 'docker', dockerImage: IMAGE });
    c = await cast(d);
  });
  afterAll(() => d?.close());

  it('runs a container with host networking and the size limit, restarts it after a crash, removes it on delete', async () => {
    const made = await createInstance(d, c.member.token, c.project.id, { name: 'boxed', maxmemory_policy: 'allkeys-lru' });
    await waitState(d, c.member.token, c.project.id, 'boxed', 'ready', 30_000);
    const row = instanceRow(d, c.project.id, 'boxed')!;
    const container = docker.getContainer(`platform-cache-${row.id}`);
    const info = await container.inspect();
    expect(info.State.Running).toBe(true);
    expect(info.HostConfig.NetworkMode).toBe('host');
    expect(info.HostConfig.Memory).toBe(256 * 1024 * 1024);

    const redis = () => new Redis(made.credential.uri, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // The same redis.conf as the process driver: the password is required in the container too.
    if (haveRedisCli) expect(await redisCli(row.port, undefined, ['GET', 'x'])).toMatch(/NOAUTH/);
    const r1 = redis();
    await r1.connect();
    await r1.set('in-a-container', 'yes');
    r1.disconnect();
    const stats = await d.api('GET', `${base(c.project.id)}/boxed/stats`, { token: c.member.token });
    expect(stats.body).toMatchObject({ maxmemory_bytes: 192 * 1024 * 1024, maxmemory_policy: 'allkeys-lru', db_keys: 1 });
    const { authedCommand } = await import('../../src/daemon/services/cache/resp.js');
    expect(await authedCommand(row.port, made.credential.password, ['INFO', 'persistence'], 2000)).toMatch(/aof_enabled:1/);

    await container.kill();
    await waitState(d, c.member.token, c.project.id, 'boxed', 'degraded', 10_000);
    await waitState(d, c.member.token, c.project.id, 'boxed', 'ready', 30_000);
    const r2 = redis();
    r2.on('error', () => {});
    await r2.connect();
    expect(await r2.get('in-a-container')).toBe('yes');
    r2.disconnect();

    expect((await d.api('DELETE', `${base(c.project.id)}/boxed`, { token: c.admin.token })).status).toBe(202);
    await waitFor('the container to go', async () => {
      try {
        await docker.getContainer(`platform-cache-${row.id}`).inspect();
        return undefined;
      } catch {
        return true;
      }
    }, 20_000);
    const h = await d.api('GET', '/cache/healthz');
    expect(h.body.checks.orchestration).toBe('ok');
  }, 90_000);
});

describe.skipIf(Boolean(skipReason))('docker driver: external exposure', () => {
  it('serves TLS from the container with the certificate of the local CA', async () => {
    const d = await startCacheDaemon({ driver: 'docker', dockerImage: IMAGE });
    try {
      const token = await d.adminToken();
      const projectId = (d.db.prepare(`SELECT id FROM acct_projects WHERE slug = 'default'`).get() as { id: string }).id;
      const made = await createInstance(d, token, projectId, { name: 'boxed-tls', external_exposure: true, persistence: { enabled: false } });
      const view = await waitState(d, token, projectId, 'boxed-tls', 'ready', 30_000);
      const row = instanceRow(d, projectId, 'boxed-tls')!;
      expect(view).toMatchObject({ externally_reachable: true, external_endpoint: `rediss://127.0.0.1:${row.tls_port}` });
      const ca = readFileSync(join(d.home, 'keys', 'cache-ca.crt'));
      const r = new Redis({ host: '127.0.0.1', port: row.tls_port!, password: made.credential.password, tls: { ca }, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      await r.connect();
      expect(await r.ping()).toBe('PONG');
      r.disconnect();
    } finally {
      await d.close();
    }
  }, 60_000);
});

describe.skipIf(Boolean(skipReason))('docker driver: a daemon restart re-adopts the running container', () => {
  it('keeps the same container and its data', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { startTestDaemon } = await import('../helpers/daemon.js');
    const { cacheOverrides } = await import('./helpers.js');
    const home = mkdtempSync(join(tmpdir(), 'platform-cache-docker-'));
    const opts = { driver: 'docker' as const, dockerImage: IMAGE };
    const a = await startTestDaemon(cacheOverrides({ ...opts, stopOnExit: false }), { home });
    try {
      const token = await a.adminToken();
      const projectId = (a.db.prepare(`SELECT id FROM acct_projects WHERE slug = 'default'`).get() as { id: string }).id;
      const made = await createInstance(a, token, projectId, { name: 'adopted' });
      await waitState(a, token, projectId, 'adopted', 'ready', 30_000);
      const row = instanceRow(a, projectId, 'adopted')!;
      const before = await docker.getContainer(`platform-cache-${row.id}`).inspect();
      const r = new Redis(made.credential.uri, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      await r.connect();
      await r.set('kept', 'yes');
      r.disconnect();
      await a.close();

      const b = await startTestDaemon(cacheOverrides(opts), { home });
      try {
        await waitState(b, await b.adminToken(), projectId, 'adopted', 'ready', 30_000);
        const after = await docker.getContainer(`platform-cache-${row.id}`).inspect();
        expect(after.Id).toBe(before.Id);
        expect(after.State.StartedAt).toBe(before.State.StartedAt);
        const r2 = new Redis(made.credential.uri, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        await r2.connect();
        expect(await r2.get('kept')).toBe('yes');
        r2.disconnect();
      } finally {
        await b.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 90_000);
});
