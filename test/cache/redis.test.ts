import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cast } from '../helpers/fixtures.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { base, createInstance, haveRedis, haveRedisCli, instanceRow, redisCli, serverPid, startCacheDaemon, waitFor, waitState } from './helpers.js';

if (haveRedis && !haveRedisCli) console.warn('SKIPPED redis-cli checks: redis-cli is not installed (apt-get install redis-tools)');

/** A client that fails fast instead of reconnecting, so a refused password is an error, not a hang. */
function client(port: number, password?: string, extra: Record<string, unknown> = {}) {
  return new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false, ...extra });
}

/**
 * Runs fn on a connected client. When the connection itself fails (refused password, TLS
 * handshake), ioredis rejects with a generic "Connection is closed"; the real reason is the
 * last 'error' event, so that is what the caller sees.
 */
async function withClient<T>(port: number, password: string | undefined, fn: (r: Redis) => Promise<T>, extra: Record<string, unknown> = {}): Promise<T> {
  const r = client(port, password, extra);
  let lastError: Error | undefined;
  r.on('error', (e: Error) => (lastError = e));
  try {
    await r.connect();
    return await fn(r);
  } catch (e) {
    throw /Connection is closed/.test((e as Error).message) && lastError ? lastError : e;
  } finally {
    r.disconnect();
  }
}

const errorOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
};

/**
 * The instances are real redis-server processes: talk to them with ioredis and redis-cli.
 * maxmemory is overridden to 4mb (test knob PLATFORM_CACHE_MAXMEMORY_OVERRIDE) so eviction is quick,
 * and the restart after a rotation waits 1.5 s (knob) so the old password can be shown working first.
 */
describe.skipIf(!haveRedis)('cache instances are real Redis', () => {
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;
  let pid: string;
  let main: Awaited<ReturnType<typeof createInstance>>;

  beforeAll(async () => {
    d = await startCacheDaemon({ maxmemoryOverride: '4mb', rotateRestartDelayMs: 1500 });
    c = await cast(d);
    pid = c.project.id;
    main = await createInstance(d, c.member.token, pid, { name: 'main' });
    await waitState(d, c.member.token, pid, 'main');
  });
  afterAll(() => d?.close());

  const port = () => instanceRow(d, pid, 'main')!.port;

  it('requires the password (NOAUTH, WRONGPASS) and serves SET and GET with it', async () => {
    expect(await errorOf(withClient(port(), undefined, (r) => r.get('x')))).toMatch(/NOAUTH/);
    expect(await errorOf(withClient(port(), 'wrong-password', (r) => r.ping()))).toMatch(/WRONGPASS/);
    await withClient(port(), main.credential.password, async (r) => {
      expect(await r.set('greeting', 'hello')).toBe('OK');
      expect(await r.get('greeting')).toBe('hello');
      // CONFIG is disabled so a client cannot change the password under the supervisor.
      expect(await errorOf(r.call('CONFIG', 'GET', 'requirepass'))).toMatch(/unknown command/);
    });
    // The credential's uri works as given.
    const viaUri = new Redis(main.credential.uri, { lazyConnect: true });
    await viaUri.connect();
    expect(await viaUri.get('greeting')).toBe('hello');
    viaUri.disconnect();
  });

  it.skipIf(!haveRedisCli)('redis-cli: refused without the password, works with REDISCLI_AUTH', async () => {
    expect(await redisCli(port(), undefined, ['GET', 'greeting'])).toMatch(/NOAUTH/);
    expect(await redisCli(port(), 'nope', ['PING'])).toMatch(/WRONGPASS/);
    expect(await redisCli(port(), main.credential.password, ['SET', 'cli-key', 'from-cli'])).toBe('OK');
    expect(await redisCli(port(), main.credential.password, ['GET', 'cli-key'])).toBe('from-cli');
  });

  /** Fills an instance past maxmemory with 4 KiB values, every other key with a TTL; counts what was accepted. */
  async function fill(r: Redis, n: number) {
    const value = 'x'.repeat(4096);
    const acc = { plainOk: 0, ttlOk: 0, oom: 0 };
    for (let i = 0; i < n; i += 100) {
      const p = r.pipeline();
      for (let j = i; j < i + 100; j++) {
        if (j % 2) p.set(`ttl:${j}`, value, 'EX', 3600);
        else p.set(`plain:${j}`, value);
      }
      for (const [k, [err]] of (await p.exec())!.entries()) {
        if (err) {
          expect(err.message).toMatch(/OOM/);
          acc.oom++;
        } else if ((i + k) % 2) acc.ttlOk++;
        else acc.plainOk++;
      }
    }
    return acc;
  }

  const POLICIES = ['noeviction', 'allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl'] as const;

  it('evicts at maxmemory as each policy says', async () => {
    const made = await Promise.all(
      POLICIES.map((policy) => createInstance(d, c.member.token, pid, { name: `evict-${policy}`, maxmemory_policy: policy, persistence: { enabled: false } })),
    );
    await Promise.all(POLICIES.map((p) => waitState(d, c.member.token, pid, `evict-${p}`)));
    for (const [i, policy] of POLICIES.entries()) {
      const row = instanceRow(d, pid, `evict-${policy}`)!;
      await withClient(row.port, made[i]!.credential.password, async (r) => {
        const { plainOk, ttlOk, oom } = await fill(r, 2000);
        const plain = (await r.keys('plain:*')).length;
        const ttl = (await r.keys('ttl:*')).length;
        const stats = (await d.api('GET', `${base(pid)}/evict-${policy}/stats`, { token: c.member.token })).body;
        expect(stats.maxmemory_bytes, policy).toBe(4 * 1024 * 1024);
        expect(stats.maxmemory_policy).toBe(policy);
        if (policy === 'noeviction') {
          // Writes are refused once full and nothing is evicted.
          expect(oom).toBeGreaterThan(0);
          expect(stats.evicted_keys).toBe(0);
          expect(plain + ttl).toBe(plainOk + ttlOk);
        } else if (policy.startsWith('allkeys')) {
          // Every write succeeds; keys with and without a TTL alike make room.
          expect(oom, policy).toBe(0);
          expect(stats.evicted_keys, policy).toBeGreaterThan(0);
          expect(plain, policy).toBeLessThan(plainOk);
          expect(ttl, policy).toBeLessThan(ttlOk);
        } else {
          // Only keys with a TTL are evicted: every accepted plain key is still there; once no
          // volatile key is left, writes are refused.
          expect(stats.evicted_keys, policy).toBeGreaterThan(0);
          expect(plain, policy).toBe(plainOk);
          expect(ttl, policy).toBeLessThan(ttlOk);
          expect(oom, policy).toBeGreaterThan(0);
        }
      });
    }
  }, 60_000);

  it('persistence keeps data across an instance restart (crash); without it the data goes', async () => {
    const eph = await createInstance(d, c.member.token, pid, { name: 'ephemeral', persistence: { enabled: false } });
    await waitState(d, c.member.token, pid, 'ephemeral');
    const ephRow = instanceRow(d, pid, 'ephemeral')!;
    await withClient(ephRow.port, eph.credential.password, (r) => r.set('gone', 'soon'));
    await withClient(port(), main.credential.password, (r) => r.set('kept', 'yes'));
    for (const name of ['main', 'ephemeral']) {
      const row = instanceRow(d, pid, name)!;
      const before = serverPid(d.home, row.id);
      process.kill(before, 'SIGKILL');
      // Degraded while the supervisor restarts it, then ready again with a new process.
      await waitState(d, c.member.token, pid, name, 'degraded', 5000);
      const view = await waitState(d, c.member.token, pid, name);
      expect(view.ready).toBe(true);
      expect(serverPid(d.home, row.id)).not.toBe(before);
    }
    expect(await withClient(port(), main.credential.password, (r) => r.get('kept'))).toBe('yes');
    expect(await withClient(ephRow.port, eph.credential.password, (r) => r.get('gone'))).toBeNull();
  }, 30_000);

  it('degraded view carries the reason and the conditions while restarting', async () => {
    const row = instanceRow(d, pid, 'main')!;
    process.kill(serverPid(d.home, row.id), 'SIGKILL');
    const view = await waitState(d, c.member.token, pid, 'main', 'degraded', 5000);
    expect(view.ready).toBe(false);
    expect(view.message).toMatch(/exited \(signal SIGKILL\) unexpectedly; restarting in \d+ ms|not running/);
    expect(view.conditions.find((x: any) => x.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Restarting' });
    await waitState(d, c.member.token, pid, 'main');
  }, 20_000);

  it('rotation: the old password works until the restart, then only the new one', async () => {
    await withClient(port(), main.credential.password, (r) => r.set('before-rotation', '1'));
    const r = await d.api('POST', `${base(pid)}/main/rotate-credential`, { token: c.admin.token });
    expect(r.status).toBe(200);
    const fresh = r.body.credential.password as string;
    expect(fresh).not.toBe(main.credential.password);
    // Before the restart: the old password still works, the new one does not yet.
    expect(await withClient(port(), main.credential.password, (x) => x.get('before-rotation'))).toBe('1');
    expect(await errorOf(withClient(port(), fresh, (x) => x.ping()))).toMatch(/WRONGPASS/);
    // Stats keep working during the window (the daemon falls back to the previous password).
    expect((await d.api('GET', `${base(pid)}/main/stats`, { token: c.member.token })).status).toBe(200);
    // After the restart: only the new one, with the data kept.
    await waitFor('the new password to be accepted', async () => ((await errorOf(withClient(port(), fresh, (x) => x.ping()))) === 'no error' ? true : undefined));
    await waitState(d, c.member.token, pid, 'main');
    expect(await errorOf(withClient(port(), main.credential.password, (x) => x.ping()))).toMatch(/WRONGPASS/);
    expect(await withClient(port(), fresh, (x) => x.get('before-rotation'))).toBe('1');
    if (haveRedisCli) expect(await redisCli(port(), fresh, ['GET', 'before-rotation'])).toBe('1');
    main.credential.password = fresh;
  }, 20_000);

  it('external exposure serves TLS with a certificate from the local CA', async () => {
    const made = await createInstance(d, c.member.token, pid, { name: 'public', external_exposure: true, persistence: { enabled: false } });
    expect(made.memorystore).toMatchObject({ external_exposure: true, externally_reachable: false });
    expect(made.memorystore.external_endpoint).toBeUndefined();
    expect(made.credential.external_uri).toBeUndefined();
    const view = await waitState(d, c.member.token, pid, 'public');
    const row = instanceRow(d, pid, 'public')!;
    expect(view).toMatchObject({ externally_reachable: true, external_endpoint: `rediss://127.0.0.1:${row.tls_port}` });
    expect(view.conditions.find((x: any) => x.type === 'ExternallyReachable')).toMatchObject({ status: 'True' });
    const ca = readFileSync(join(d.home, 'keys', 'cache-ca.crt'));
    // ioredis over TLS, verifying the server against the local CA (IP and host name SANs).
    const tlsPing = (opts: Record<string, unknown>) => withClient(row.tls_port!, made.credential.password, (r) => r.ping(), { tls: opts });
    expect(await tlsPing({ ca })).toBe('PONG');
    expect(await tlsPing({ ca, servername: `public-${c.project.short}.cache.localhost` })).toBe('PONG');
    // Without trusting the CA the handshake fails: the certificate is really checked.
    expect(await errorOf(tlsPing({}))).toMatch(/self[- ]signed|unable to verify|certificate/i);
    // The password is still the boundary on the TLS port.
    expect(await errorOf(withClient(row.tls_port!, 'wrong', (r) => r.ping(), { tls: { ca } }))).toMatch(/WRONGPASS/);
    if (haveRedisCli) {
      const out = await redisCli(row.tls_port!, made.credential.password, ['PING'], ['--tls', '--cacert', join(d.home, 'keys', 'cache-ca.crt')]);
      expect(out).toBe('PONG');
    }
    // Rotation on an exposed, ready instance returns the external uri too.
    const rot = await d.api('POST', `${base(pid)}/public/rotate-credential`, { token: c.admin.token });
    expect(rot.body.credential.external_uri).toBe(`rediss://:${rot.body.credential.password}@127.0.0.1:${row.tls_port}`);
  }, 30_000);
});
