import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess } from '../helpers/daemon-process.js';
import { CACHE_IMAGE, dockerSkipReason, haveRedis, pidAlive, waitFor, withRedis } from './helpers.js';


interface Proc {
  child: ChildProcess;
  url: string;
  token: string;
  exited: Promise<void>;
}

/** The real daemon process with fast cache health checks, signed in as its admin. */
async function startDaemonProcess(home: string, env: Record<string, string> = {}): Promise<Proc> {
  const p = await spawnDaemonProcess(home, { PLATFORM_CACHE_HEALTH_INTERVAL_MS: '100', PLATFORM_CACHE_RESTART_BACKOFF_MS: '200', ...env });
  return { child: p.child, url: p.url, token: await loginToken(p.url), exited: p.exited };
}

async function call(p: Proc, method: string, path: string, body?: unknown) {
  const res = await fetch(p.url + path, {
    method,
    headers: { authorization: `Bearer ${p.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

const waitView = (p: Proc, path: string, pred: (v: any) => boolean, what: string) =>
  waitFor(what, async () => {
    const r = await call(p, 'GET', path);
    return r.status === 200 && pred(r.body) ? r.body : undefined;
  }, 20_000);


/**
 * The real daemon process (dist/daemon/main.js): a graceful stop with PLATFORM_CACHE_STOP_ON_EXIT=0
 * leaves instances running and the next daemon re-adopts them; so does a kill -9 of the daemon; after a daemon crash with the
 * server also dead, the next daemon restarts it from its append-only file with the data intact.
 */
describe.skipIf(!haveRedis || !existsSync(DAEMON_MAIN))('cache instances across daemon restarts (real daemon process)', () => {
  const home = mkdtempSync(join(tmpdir(), 'platform-cache-restart-'));
  let current: Proc | undefined;

  afterAll(async () => {
    if (current && current.child.exitCode === null) {
      current.child.kill('SIGKILL');
      await current.exited;
    }
    // Whatever server is left belongs to this test's state directory: stop it by its pid file.
    for (const id of existsSync(join(home, 'cache')) ? readdirSync(join(home, 'cache')) : []) {
      try {
        process.kill(Number(readFileSync(join(home, 'cache', id, 'redis.pid'), 'utf8')), 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(home, { recursive: true, force: true });
  });

  it('re-adopts after a graceful stop and after kill -9, and restarts with data intact after crashes', async () => {
    // PLATFORM_CACHE_STOP_ON_EXIT=0: a graceful stop leaves the servers for re-adoption (the
    // default stops them with the daemon; test/durability/daemon-stop.test.ts covers that).
    current = await startDaemonProcess(home, { PLATFORM_CACHE_STOP_ON_EXIT: '0' });
    const projects = await call(current, 'GET', '/v1/projects');
    const projectId = projects.body.projects.find((p: any) => p.slug === 'default').id;
    const path = `/v1/projects/${projectId}/memorystores`;
    const created = await call(current, 'POST', path, { name: 'durable' });
    expect(created.status).toBe(201);
    const uri = created.body.credential.uri as string;
    await waitView(current, `${path}/durable`, (v) => v.ready, 'ready on the first daemon');
    await withRedis(uri, (r) => r.set('survives', 'daemon restarts'));
    const id = readdirOne(home);
    const pidFile = join(home, 'cache', id, 'redis.pid');
    const firstPid = Number(readFileSync(pidFile, 'utf8'));

    // Graceful stop with PLATFORM_CACHE_STOP_ON_EXIT=0: the server keeps running (workloads keep their connections).
    current.child.kill('SIGTERM');
    await current.exited;
    expect(pidAlive(firstPid)).toBe(true);
    expect(await withRedis(uri, (r) => r.get('survives'))).toBe('daemon restarts');

    // The next daemon re-adopts the same process.
    current = await startDaemonProcess(home);
    const adopted = await waitView(current, `${path}/durable`, (v) => v.ready, 'ready after re-adoption');
    expect(adopted.state).toBe('ready');
    expect(Number(readFileSync(pidFile, 'utf8'))).toBe(firstPid);

    // kill -9 of the daemon alone: the server never notices; the next daemon re-adopts it again.
    await withRedis(uri, (r) => r.set('after-adoption', 'written'));
    current.child.kill('SIGKILL');
    await current.exited;
    expect(pidAlive(firstPid)).toBe(true);
    expect(await withRedis(uri, (r) => r.get('after-adoption'))).toBe('written');
    current = await startDaemonProcess(home);
    const readopted = await waitView(current, `${path}/durable`, (v) => v.ready, 'ready after a daemon kill -9');
    expect(readopted).toMatchObject({ state: 'ready', ready: true });
    expect(Number(readFileSync(pidFile, 'utf8'))).toBe(firstPid);
    // The re-adopted server is supervised: stats read it, and its crash (it cannot be awaited,
    // only probed) shows as degraded and is followed by a restart from its data.
    const stats = await call(current, 'GET', `${path}/durable/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body.db_keys).toBe(2);
    process.kill(firstPid, 'SIGKILL');
    await waitView(current, `${path}/durable`, (v) => v.state === 'degraded', 'degraded after the adopted server died');
    await waitView(current, `${path}/durable`, (v) => v.ready, 'ready after the supervisor restart');
    const restartedPid = Number(readFileSync(pidFile, 'utf8'));
    expect(restartedPid).not.toBe(firstPid);
    expect(await withRedis(uri, (r) => r.get('after-adoption'))).toBe('written');

    // A daemon crash and a server crash together: the next daemon restarts the server from its data.
    current.child.kill('SIGKILL');
    await current.exited;
    process.kill(restartedPid, 'SIGKILL');
    await waitFor('the server to die', async () => (pidAlive(restartedPid) ? undefined : true));
    current = await startDaemonProcess(home, { PLATFORM_CACHE_STOP_ON_EXIT: '1' });
    await waitView(current, `${path}/durable`, (v) => v.ready, 'ready after restart');
    const secondPid = Number(readFileSync(pidFile, 'utf8'));
    expect(secondPid).not.toBe(restartedPid);
    expect(await withRedis(uri, (r) => r.get('survives'))).toBe('daemon restarts');
    expect(await withRedis(uri, (r) => r.get('after-adoption'))).toBe('written');

    // By default (here explicitly PLATFORM_CACHE_STOP_ON_EXIT=1) a graceful stop also stops the servers.
    current.child.kill('SIGTERM');
    await current.exited;
    await waitFor('the server to stop with the daemon', async () => (pidAlive(secondPid) ? undefined : true), 10_000);
  }, 60_000);
});

const dockerSkip = await dockerSkipReason();
if (dockerSkip) console.warn(`SKIPPED cache docker kill -9 re-adoption test: ${dockerSkip}`);

/** The same under the docker driver: a daemon killed with -9 leaves the container; the next daemon adopts it. */
describe.skipIf(Boolean(dockerSkip) || !existsSync(DAEMON_MAIN))('docker driver: a daemon kill -9 leaves the container for the next daemon', () => {
  const home = mkdtempSync(join(tmpdir(), 'platform-cache-docker-kill-'));
  let current: Proc | undefined;
  afterAll(async () => {
    if (current && current.child.exitCode === null) {
      current.child.kill('SIGTERM');
      await current.exited;
    }
    // A failure midway must not leave a container behind.
    for (const id of existsSync(join(home, 'cache')) ? readdirSync(join(home, 'cache')) : []) {
      await new Docker().getContainer(`platform-cache-${id}`).remove({ force: true }).catch(() => {});
    }
    rmSync(home, { recursive: true, force: true });
  });

  it('re-adopts the same container with its data', async () => {
    const env = { PLATFORM_CACHE_DRIVER: 'docker', PLATFORM_CACHE_DOCKER_IMAGE: CACHE_IMAGE };
    current = await startDaemonProcess(home, env);
    const projects = await call(current, 'GET', '/v1/projects');
    const path = `/v1/projects/${projects.body.projects.find((p: any) => p.slug === 'default').id}/memorystores`;
    const created = await call(current, 'POST', path, { name: 'boxed' });
    expect(created.status).toBe(201);
    const uri = created.body.credential.uri as string;
    await waitView(current, `${path}/boxed`, (v) => v.ready, 'ready on the first daemon');
    await withRedis(uri, (r) => r.set('k', 'kept'));
    const container = new Docker().getContainer(`platform-cache-${readdirOne(home)}`);
    const before = await container.inspect();

    current.child.kill('SIGKILL');
    await current.exited;
    expect((await container.inspect()).State.Running).toBe(true);
    current = await startDaemonProcess(home, { ...env, PLATFORM_CACHE_STOP_ON_EXIT: '1' });
    await waitView(current, `${path}/boxed`, (v) => v.ready, 'ready after the daemon kill -9');
    const after = await container.inspect();
    expect(after.Id).toBe(before.Id);
    expect(after.State.StartedAt).toBe(before.State.StartedAt);
    expect(await withRedis(uri, (r) => r.get('k'))).toBe('kept');

    // The graceful stop with STOP_ON_EXIT removes the container.
    current.child.kill('SIGTERM');
    await current.exited;
    await expect(container.inspect()).rejects.toThrow(/no such container/i);
  }, 60_000);
});

function readdirOne(home: string): string {
  const ids = readdirSync(join(home, 'cache'));
  if (ids.length !== 1) throw new Error(`expected one instance directory, found ${ids.length}`);
  return ids[0]!;
}

/**
 * A daemon that stops between a rotation and the restart that applies it: the next daemon finds
 * the server still running with the old password, re-adopts it, and restarts it at once so the
 * new password takes effect (in-process daemons sharing one state directory).
 */
describe.skipIf(!haveRedis)('a rotation interrupted by a daemon stop is completed by the next daemon', () => {
  const home = mkdtempSync(join(tmpdir(), 'platform-cache-rotate-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('re-adopts with the previous password and then applies the new one', async () => {
    const { startTestDaemon } = await import('../helpers/daemon.js');
    const { cacheOverrides, createInstance, waitState, instanceRow, serverPid } = await import('./helpers.js');
    // First daemon: the restart after rotation is far away, and servers outlive a graceful stop.
    const a = await startTestDaemon(cacheOverrides({ rotateRestartDelayMs: 60_000, stopOnExit: false }), { home });
    const token = await a.adminToken();
    const projectId = (a.db.prepare(`SELECT id FROM acct_projects WHERE slug = 'default'`).get() as { id: string }).id;
    const made = await createInstance(a, token, projectId, { name: 'mid-rotation' });
    await waitState(a, token, projectId, 'mid-rotation');
    const row = instanceRow(a, projectId, 'mid-rotation')!;
    await withRedis(made.credential.uri, (r) => r.set('k', 'v'));
    const rotated = await a.api('POST', `/v1/projects/${projectId}/memorystores/mid-rotation/rotate-credential`, { token });
    expect(rotated.status).toBe(200);
    const oldPid = serverPid(home, row.id);
    await a.close();
    expect(pidAlive(oldPid)).toBe(true);

    const b = await startTestDaemon(cacheOverrides(), { home });
    try {
      const tokenB = await b.adminToken();
      await waitFor('the restart with the new password', async () => (serverPid(home, row.id) !== oldPid ? true : undefined));
      await waitState(b, tokenB, projectId, 'mid-rotation');
      expect(pidAlive(oldPid)).toBe(false);
      expect(await withRedis(rotated.body.credential.uri, (r) => r.get('k'))).toBe('v');
      const old = await withRedis(made.credential.uri, (r) => r.ping()).catch((e: Error) => e.message);
      expect(old).not.toBe('PONG');
      expect(b.db.prepare('SELECT previous_password FROM cache_instances WHERE id = ?').get(row.id)).toEqual({ previous_password: null });
    } finally {
      await b.close();
    }
  }, 30_000);
});
