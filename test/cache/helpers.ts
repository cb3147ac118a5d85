import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { Redis } from 'ioredis';
import { execa } from 'execa';
import { expect } from 'vitest';
import { configFromEnv, type DaemonConfig } from '../../src/daemon/config.js';
import type { CacheConfig } from '../../src/daemon/services/cache/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { openText } from '../../src/daemon/crypto/sealed.js';

export { pidAlive } from '../../src/daemon/services/cache/process-driver.js';

/** Real redis-server and redis-cli are required; without them the suites skip and say why. */
export const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
export const haveRedisCli = spawnSync('redis-cli', ['--version']).status === 0;
if (!haveRedis) console.warn('SKIPPED cache tests: redis-server is not installed (apt-get install redis-server redis-tools)');

/** Fast timers for tests: probes every 100 ms, restarts after 300 ms, servers stopped with the daemon. */
export function cacheOverrides(extra: Partial<CacheConfig> = {}): Partial<DaemonConfig> {
  return {
    cache: {
      ...configFromEnv({}).cache,
      healthIntervalMs: 100,
      restartBackoffMs: 300,
      startTimeoutMs: 10_000,
      stopOnExit: true,
      ...extra,
    },
  };
}

export const startCacheDaemon = (extra: Partial<CacheConfig> = {}) => startTestDaemon(cacheOverrides(extra));

export const base = (projectId: string) => `/v1/projects/${projectId}/memorystores`;

/** Polls until `check` returns a value (not undefined), or fails with the last seen state. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the instance reports a state (ready by default) and returns its view. */
export async function waitState(d: TestDaemon, token: string, projectId: string, name: string, state = 'ready', timeoutMs = 15_000) {
  let last: any;
  try {
    return await waitFor(
      `${name} to be ${state}`,
      async () => {
        const r = await d.api('GET', `${base(projectId)}/${name}`, { token });
        last = r.body;
        return r.status === 200 && r.body.state === state ? r.body : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last view: ${JSON.stringify(last)}`);
  }
}

/** Creates an instance (201 expected) and returns the create response. */
export async function createInstance(d: TestDaemon, token: string, projectId: string, body: Record<string, unknown>) {
  const r = await d.api('POST', base(projectId), { token, body });
  expect(r.status, r.text).toBe(201);
  return r.body as { memorystore: any; credential: { username: string; password: string; uri: string; external_uri?: string }; note: string };
}

/** The instance's row, with its password opened (it is sealed with the master key at rest). */
export function instanceRow(d: TestDaemon, projectId: string, name: string) {
  const row = d.db.prepare('SELECT * FROM cache_instances WHERE project_id = ? AND name = ?').get(projectId, name) as
    | { id: string; port: number; tls_port: number | null; password: string }
    | undefined;
  return row && { ...row, password: openText(d.db, row.password, `cache-instance:${row.id}:password`) };
}

export const instanceDir = (home: string, id: string) => join(home, 'cache', id);
export const serverPid = (home: string, id: string) => Number(readFileSync(join(instanceDir(home, id), 'redis.pid'), 'utf8').trim());

/** Runs fn with an ioredis client on a redis URI, closing it afterwards; no retries (tests see errors). */
export async function withRedis<T>(uri: string, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(uri, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => {});
  await r.connect();
  try {
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

/** Runs redis-cli with the password in REDISCLI_AUTH (never on its command line). */
export async function redisCli(port: number, password: string | undefined, args: string[], extra: string[] = []) {
  const r = await execa('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...extra, ...args], {
    env: password === undefined ? {} : { REDISCLI_AUTH: password },
    extendEnv: true,
    reject: false,
    timeout: 10_000,
  });
  return `${r.stdout}${r.stderr}`.trim();
}

/** The local image the docker driver runs (scripts/build-redis-image.sh). */
export const CACHE_IMAGE = 'platform-redis:local';

/**
 * Why the docker-driver tests cannot run here, or undefined when they can: they need an engine
 * and the local redis image, which is built from the machine's redis-server when missing.
 */
export async function dockerSkipReason(): Promise<string | undefined> {
  if (!haveRedis) return 'redis-server is not installed (the image is built from it)';
  const docker = new Docker();
  try {
    await docker.ping();
  } catch (e) {
    return `no Docker engine answers (${(e as Error).message}); start one with: dockerd --bridge=none --iptables=false &`;
  }
  try {
    await docker.getImage(CACHE_IMAGE).inspect();
  } catch {
    try {
      execFileSync(join(import.meta.dirname, '..', '..', 'scripts', 'build-redis-image.sh'), [CACHE_IMAGE], { stdio: 'pipe' });
    } catch (e) {
      return `cannot build ${CACHE_IMAGE}: ${(e as Error).message}`;
    }
  }
  return undefined;
}
