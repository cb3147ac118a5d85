import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DAEMON_MAIN, PROCESS_ADMIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { archive, HELLO_PY } from '../agents/helpers.js';
import { call, until } from './api.js';

/**
 * `platform server backup` while the daemon serves under a write load, `platform server restore`
 * into a new state directory, a daemon started there: every write acknowledged before the backup
 * began is present (messages, secret versions, an object, cache keys, a deployed function).
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const root = mkdtempSync(join(tmpdir(), 'platform-backup-'));
const homeA = join(root, 'a');
const homeB = join(root, 'restored');
const file = join(root, 'backup.tar.gz');
const daemons: DaemonProcess[] = [];

afterAll(async () => {
  for (const d of daemons) {
    if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGTERM');
    await d.exited;
  }
  rmSync(root, { recursive: true, force: true });
});

const cli = (home: string, args: string[], input?: string) =>
  execa('node', [BIN, ...args], {
    env: { PLATFORM_HOME: home, PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1', PLATFORM_SANDBOX_POOL_TARGET: '0' },
    input,
    stdin: input === undefined ? 'ignore' : undefined,
    reject: false,
    timeout: 60_000,
  });

const stop = async (d: DaemonProcess) => {
  d.child.kill('SIGTERM');
  await d.exited;
};

describe.skipIf(!existsSync(DAEMON_MAIN))('server backup and restore', () => {
  it('a backup taken under write load restores into a new home with every write acknowledged before it began', { timeout: 120_000 }, async () => {
    mkdirSync(homeA, { recursive: true });
    // Graph saves every second, so the archive carries one (saves happen once 1,000 points changed).
    const a = await spawnDaemonProcess(homeA, { PLATFORM_VECTOR_GRAPH_SAVE_SECONDS: '1' });
    daemons.push(a);
    const admin = await loginToken(a.url);
    const project = (await call(a.url, 'GET', '/v1/projects/default', admin)).body as { id: string; short: string };
    const p = `/v1/projects/${project.id}`;

    // State of every kind the archive carries.
    const form = new FormData();
    form.append('name', 'hello');
    form.append('framework', 'function');
    form.append('runtime', 'python');
    form.append('code', new Blob([new Uint8Array(archive({ 'main.py': HELLO_PY }))]), 'code.tar.gz');
    expect((await fetch(`${a.url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } })).status).toBe(202);
    expect((await call(a.url, 'POST', `${p}/topics`, admin, { name: 'ledger' })).status).toBe(201);
    await until('topic ready', async () => (await call(a.url, 'GET', `${p}/topics/ledger`, admin)).body.state === 'ready');
    expect((await call(a.url, 'POST', `${p}/topics/ledger/subscriptions`, admin, { name: 'audit', ack_deadline_seconds: 600 })).status).toBe(201);
    await until('subscription ready', async () => (await call(a.url, 'GET', `${p}/topics/ledger/subscriptions/audit`, admin)).body.state === 'ready');
    const put = await fetch(`${a.url}${p}/buckets/inbox/objects/reports/q3.csv`, { method: 'PUT', body: 'a,b\n1,2\n', headers: { authorization: `Bearer ${admin}` } });
    expect(put.status).toBe(201);
    const cache = await call(a.url, 'POST', `${p}/memorystores`, admin, { name: 'kv' });
    expect(cache.status, cache.text).toBeLessThan(300);
    const uri = cache.body.credential.uri as string;
    await until('cache ready', async () => (await call(a.url, 'GET', `${p}/memorystores/kv`, admin)).body.ready === true, 30_000);
    const redis = new Redis(uri, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    for (let i = 0; i < 50; i++) await redis.set(`k${i}`, `v${i}`);
    redis.disconnect();
    expect((await call(a.url, 'POST', `${p}/indexes`, admin, { name: 'docs', dimensions: 3, distance: 'euclid' })).status).toBe(201);
    await until('index ready', async () => (await call(a.url, 'GET', `${p}/indexes/docs`, admin)).body.index.ready === true);
    for (let from = 1; from <= 1200; from += 200) {
      const points = Array.from({ length: 200 }, (_, i) => ({ id: from + i, vector: [from + i, (from + i) % 7, 1], payload: {} }));
      expect((await call(a.url, 'POST', `${p}/indexes/docs:upsert`, admin, { points })).status).toBe(200);
    }
    await until('a graph save', async () => readdirSync(join(homeA, 'vector')).some((f) => f.endsWith('.graph')));
    // A change after the save: the restored store is newer than the saved graph and must win.
    expect((await call(a.url, 'POST', `${p}/indexes/docs:upsert`, admin, { points: [{ id: 5, vector: [5000, 0, 1], payload: {} }] })).status).toBe(200);
    await until('function ready', async () => (await call(a.url, 'GET', '/v1/agents/hello', admin)).body.state === 'ready', 60_000);

    // The write load: publishes and secret versions, each recorded with the time it was acknowledged.
    const acked = { messages: [] as Array<{ text: string; at: number }>, versions: [] as Array<{ version: number; value: string; at: number }> };
    let writing = true;
    const publisher = async () => {
      for (let n = 0; writing; n++) {
        const text = `m${n}`;
        const r = await call(a.url, 'POST', `${p}/topics/ledger:publish`, admin, { messages: [{ text }] });
        if (r.status === 200) acked.messages.push({ text, at: Date.now() });
        // A steady load that leaves the CLI some of the machine's two cores.
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const rotator = async () => {
      for (let n = 0; writing; n++) {
        const value = `secret-${n}`;
        const r = await call(a.url, 'POST', `${p}/secrets`, admin, { name: 'api-token', value });
        if (r.status === 200 || r.status === 201) acked.versions.push({ version: r.body.version, value, at: Date.now() });
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const load = [publisher(), rotator()];
    await until('the load is running', async () => acked.messages.length >= 20 && acked.versions.length >= 5);

    const login = await cli(homeA, ['login', '--email', PROCESS_ADMIN.email, '--password-stdin'], PROCESS_ADMIN.password);
    expect(login.exitCode, login.stderr).toBe(0);
    const began = Date.now();
    const backup = await cli(homeA, ['server', 'backup', file, '--json']);
    const ended = Date.now();
    writing = false;
    await Promise.all(load);
    expect(backup.exitCode, backup.stderr).toBe(0);
    expect(JSON.parse(backup.stdout)).toMatchObject({ file, bytes: statSync(file).size });
    const during = acked.messages.filter((m) => m.at >= began && m.at <= ended).length;
    const owedMessages = acked.messages.filter((m) => m.at < began);
    const owedVersions = acked.versions.filter((v) => v.at < began);
    // The original stops (its cache server and ports are the restored one's next).
    await stop(a);

    // Restore refuses a directory that holds anything, and leaves it as it was.
    const busy = join(root, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'keep.txt'), 'mine');
    const refused = await cli(homeA, ['server', 'restore', file, '--home', busy, '--json']);
    expect(refused.exitCode).toBe(1);
    expect(JSON.parse(refused.stdout).error).toMatch(/not empty/);
    expect(readdirSync(busy)).toEqual(['keep.txt']);

    // A file that is not a backup fails clearly and leaves nothing behind.
    const junk = join(root, 'junk.tar.gz');
    writeFileSync(junk, 'not an archive');
    const bad = await cli(homeA, ['server', 'restore', junk, '--home', join(root, 'never'), '--json']);
    expect(bad.exitCode).toBe(1);
    expect(JSON.parse(bad.stdout).error).toMatch(/not a readable backup archive/);
    expect(existsSync(join(root, 'never'))).toBe(false);

    const restored = await cli(homeA, ['server', 'restore', file, '--home', homeB, '--json']);
    expect(restored.exitCode, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ home: homeB, from_home: homeA, relocated: true });
    const mode = (f: string) => statSync(join(homeB, f)).mode & 0o777;
    expect([mode('.'), mode('keys'), mode('platform.db'), mode('keys/secrets-master.key')]).toEqual([0o700, 0o700, 0o600, 0o600]);

    // The cache's data came from a fresh snapshot: an AOF directory whose only file is the RDB base.
    const [cacheId] = readdirSync(join(homeB, 'cache')).filter((f) => f !== 'venvs');
    expect(readdirSync(join(homeB, 'cache', cacheId!, 'data', 'appendonlydir')).sort()).toEqual(['appendonly.aof.1.base.rdb', 'appendonly.aof.manifest']);
    if (process.env.OPS_FIGURES) console.log(a.stderr().split('\n').filter((l) => l.includes('backup')).join('\n'));
    if (process.env.OPS_FIGURES) console.log(JSON.stringify({ owed_messages: owedMessages.length, owed_versions: owedVersions.length, acknowledged_during: during, backup_ms: ended - began, bytes: statSync(file).size }));

    expect(readdirSync(join(homeB, 'vector')).some((f) => f.endsWith('.graph'))).toBe(true);
    const b = await spawnDaemonProcess(homeB);
    daemons.push(b);
    const token = await loginToken(b.url);
    const received = new Set<string>();
    for (;;) {
      const r = await call(b.url, 'POST', `${p}/topics/ledger/subscriptions/audit:pull`, token, { max_messages: 100, timeout_ms: 0, auto_ack: true });
      expect(r.status, r.text).toBe(200);
      if (!r.body.messages.length) break;
      for (const m of r.body.messages) received.add(Buffer.from(m.data, 'base64').toString());
    }
    const lost = owedMessages.filter((m) => !received.has(m.text));
    expect(lost, `${lost.length} of ${owedMessages.length} messages acknowledged before the backup are missing (${during} acknowledged during it)`).toEqual([]);
    const newest = owedVersions.at(-1)!;
    const reveal = await call(b.url, 'POST', `${p}/secrets/api-token:reveal`, token, { version: newest.version, reason: 'restore check' });
    expect(reveal.status, reveal.text).toBe(200);
    expect(reveal.body.value).toBe(newest.value);
    const object = await fetch(`${b.url}${p}/buckets/inbox/objects/reports/q3.csv`, { headers: { authorization: `Bearer ${token}` } });
    expect(await object.text()).toBe('a,b\n1,2\n');
    await until('restored cache ready', async () => (await call(b.url, 'GET', `${p}/memorystores/kv`, token)).body.ready === true, 30_000);
    const again = new Redis(uri, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await again.connect();
    expect(await again.get('k0')).toBe('v0');
    expect(await again.dbsize()).toBe(50);
    again.disconnect();
    const nearest = async (vector: number[]) => {
      const r = await call(b.url, 'POST', `${p}/indexes/docs:query`, token, { vector, top_k: 1 });
      expect(r.status, r.text).toBe(200);
      return r.body.results[0]?.id;
    };
    expect(await nearest([1000, 1000 % 7, 1])).toBe(1000);
    expect(await nearest([5000, 0, 1])).toBe(5);
    const invoked = await call(b.url, 'POST', '/v1/agents/hello/invoke', token, { message: 'restored' });
    expect(invoked.status, invoked.text).toBe(200);
    expect(invoked.body.reply).toBe('hello restored');
  });
});
