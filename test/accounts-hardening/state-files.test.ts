import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { authedCommand } from '../../src/daemon/services/cache/resp.js';
import { haveRedis, waitFor } from '../cache/helpers.js';

/**
 * Issue 17 §4 against the real daemon process: the state directory is 0700 and everything in it
 * private (also what an older version left wider), and no cache password is kept in clear in
 * any file under it: database, WAL, redis.conf, Redis data, logs.
 */
const ENV = { PLATFORM_CACHE_STOP_ON_EXIT: '1', PLATFORM_CACHE_HEALTH_INTERVAL_MS: '100', PLATFORM_CACHE_RESTART_BACKOFF_MS: '300' };
let home: string;
let daemon: DaemonProcess | undefined;

const mode = (p: string) => statSync(p).mode & 0o777;

/** Every file and directory under the state directory (links are not followed). */
function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    out.push(p);
    if (st.isDirectory()) walk(p, out);
  }
  return out;
}

async function stop(): Promise<void> {
  if (!daemon) return;
  daemon.child.kill('SIGTERM');
  await daemon.exited;
  daemon = undefined;
}

describe.skipIf(!existsSync(DAEMON_MAIN))('state files are private (issue 17 §4)', () => {
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'platform-private-'));
    // What an older daemon, or a CLI run with umask 022, left behind.
    chmodSync(home, 0o755);
    mkdirSync(join(home, 'logs'), { mode: 0o755 });
    chmodSync(join(home, 'logs'), 0o755);
    writeFileSync(join(home, 'logs', 'old.log'), 'old\n', { mode: 0o644 });
    chmodSync(join(home, 'logs', 'old.log'), 0o644);
    daemon = await spawnDaemonProcess(home, ENV);
  });
  afterAll(async () => {
    await stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('the state directory is 0700, the database and its WAL 0600, and what was left wider is tightened', async () => {
    const token = await loginToken(daemon!.url);
    // A write, so the WAL holds pages.
    expect((await fetch(`${daemon!.url}/v1/users/me/keys`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ display_name: 'modes' }) })).status).toBe(201);
    expect(mode(home)).toBe(0o700);
    expect(mode(join(home, 'platform.db'))).toBe(0o600);
    expect(existsSync(join(home, 'platform.db-wal'))).toBe(true);
    expect(mode(join(home, 'platform.db-wal'))).toBe(0o600);
    expect(mode(join(home, 'platform.db-shm'))).toBe(0o600);
    expect(mode(join(home, 'keys'))).toBe(0o700);
    expect(mode(join(home, 'logs'))).toBe(0o700);
    expect(mode(join(home, 'logs', 'old.log'))).toBe(0o600);
    for (const p of walk(home)) expect({ p, bits: statSync(p).mode & 0o077 }).toEqual({ p, bits: 0 });
  });

  it('a restart tightens a database and directory loosened meanwhile', async () => {
    await stop();
    chmodSync(home, 0o755);
    chmodSync(join(home, 'platform.db'), 0o644);
    daemon = await spawnDaemonProcess(home, ENV);
    expect(mode(home)).toBe(0o700);
    expect(mode(join(home, 'platform.db'))).toBe(0o600);
  });

  it.skipIf(!haveRedis)('no cache password in any state file; Redis data files are 0600', async () => {
    const url = daemon!.url;
    const token = await loginToken(url);
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const projects = await call('GET', '/v1/projects');
    const pid = projects.body.projects.find((p: any) => p.slug === 'default').id as string;
    const made = await call('POST', `/v1/projects/${pid}/memorystores`, { name: 'sealed' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const password = made.body.credential.password as string;
    const port = made.body.memorystore.connection.port as number;
    await waitFor('the instance to be ready', async () => ((await call('GET', `/v1/projects/${pid}/memorystores/sealed`)).body.state === 'ready' ? true : undefined), 20_000);
    // Data through the append-only file, and a rotation (previous password stored too).
    expect(await authedCommand(port, password, ['SET', 'k', 'v'], 2000)).toBe('OK');
    const rotated = await call('POST', `/v1/projects/${pid}/memorystores/sealed/rotate-credential`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const next = rotated.body.credential.password as string;
    await waitFor('the rotated password to work', async () => ((await authedCommand(port, next, ['SET', 'k2', 'v2'], 2000).catch(() => undefined)) === 'OK' ? true : undefined), 20_000);

    const files = walk(home).filter((p) => lstatSync(p).isFile());
    expect(files.some((f) => f.endsWith('redis.conf'))).toBe(true);
    const aof = files.filter((f) => f.includes('appendonlydir'));
    expect(aof.length).toBeGreaterThan(0);
    for (const f of files) {
      const bytes = readFileSync(f);
      expect({ f, first: bytes.includes(password), second: bytes.includes(next) }).toEqual({ f, first: false, second: false });
      expect({ f, bits: statSync(f).mode & 0o077 }).toEqual({ f, bits: 0 });
    }
    for (const f of aof) expect(mode(f) & 0o700).toBe(0o600);
    // The server still accepts the password: redis.conf holds its SHA-256.
    expect(await authedCommand(port, next, ['GET', 'k'], 2000)).toBe('v');
    expect((await call('DELETE', `/v1/projects/${pid}/memorystores/sealed`)).status).toBe(202);
  });
});
