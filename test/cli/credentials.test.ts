import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliSandbox } from '../helpers/cli.js';

/**
 * Issue 16 §1, no secret in clear on disk: the bootstrap admin password is shown once and stored
 * nowhere; the CLI's automatic local sign-in keeps an API key (0600 file here: no keychain in
 * the test environment), which survives a daemon restart.
 */

/** Every regular file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p);
    return e.isFile() ? [p] : [];
  });
}

/** Files whose bytes contain the needle (the database and its WAL included). */
const filesContaining = (dir: string, needle: string) => filesUnder(dir).filter((f) => readFileSync(f).includes(Buffer.from(needle)));

describe('a first start with a generated admin password', () => {
  // No PLATFORM_ADMIN_PASSWORD: the daemon makes one up and shows it once.
  const cli = cliSandbox({ PLATFORM_ADMIN_PASSWORD: '', PLATFORM_ADMIN_EMAIL: '' });
  afterAll(() => cli.stop());
  let password: string;

  it('daemon start shows the password once and the CLI keeps an API key, not the password', async () => {
    const r = await cli.run(['daemon', 'start', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.bootstrap_admin).toMatchObject({ email: 'admin@platform.local', password: expect.any(String), credential_stored_in: 'file' });
    password = r.json.bootstrap_admin.password;
    expect(password.length).toBeGreaterThanOrEqual(12);
    const cred = join(cli.home, 'credentials.json');
    expect(statSync(cred).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(cred, 'utf8')).local.token).toMatch(/^svc_[a-z0-9]{12}_[A-Za-z0-9]{40}$/);
    const again = await cli.run(['daemon', 'start', '--json']);
    expect(again.json.already_running).toBe(true);
    expect(again.json.bootstrap_admin).toBeUndefined();
  });

  it('the password signs in, and no file under the state directory contains it', async () => {
    const me = await cli.run(['whoami', '--json']);
    expect(me.exitCode, me.stderr).toBe(0);
    expect(me.json).toMatchObject({ email: 'admin@platform.local', role: 'admin' });
    const login = await fetch(`${me.json.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@platform.local', password }),
    });
    expect(login.status).toBe(200);
    expect(existsSync(join(cli.home, 'keys', 'admin.json'))).toBe(false);
    expect(filesContaining(cli.home, password)).toEqual([]);
  });

  it('the CLI keeps working across a daemon restart; still no file holds the password', async () => {
    expect((await cli.run(['daemon', 'stop'])).exitCode).toBe(0);
    const started = await cli.run(['daemon', 'start', '--json']);
    expect(started.exitCode, started.stderr).toBe(0);
    expect(started.json.bootstrap_admin).toBeUndefined();
    const me = await cli.run(['whoami', '--json']);
    expect(me.exitCode, me.stderr).toBe(0);
    expect(me.json.email).toBe('admin@platform.local');
    expect(readFileSync(join(cli.home, 'logs', 'daemon.log'), 'utf8')).not.toContain(password);
    expect(filesContaining(cli.home, password)).toEqual([]);
  });

  it('logout revokes the key the CLI made for itself', async () => {
    const cred = join(cli.home, 'credentials.json');
    const token = JSON.parse(readFileSync(cred, 'utf8')).local.token as string;
    const url = (await cli.run(['daemon', 'status', '--json'])).json.url as string;
    const out = await cli.run(['logout', '--json']);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(out.json).toMatchObject({ signed_out: true, revoked_key: token.split('_')[1] });
    expect((await fetch(`${url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    const me = await cli.run(['whoami', '--json']);
    expect(me.exitCode).toBe(1);
  });
});

describe('a state directory of an earlier version', () => {
  const cli = cliSandbox();
  afterAll(() => cli.stop());

  it('keys/admin.json is used once for the CLI’s key, then deleted', async () => {
    expect((await cli.run(['daemon', 'start'])).exitCode).toBe(0);
    // As an earlier version left it: the password in clear, no stored CLI credential.
    const legacy = join(cli.home, 'keys', 'admin.json');
    writeFileSync(legacy, JSON.stringify({ email: 'admin@example.test', password: 'Admin-Password-123' }), { mode: 0o600 });
    writeFileSync(join(cli.home, 'credentials.json'), '{}\n', { mode: 0o600 });
    const me = await cli.run(['whoami', '--json'], { env: { PLATFORM_ADMIN_PASSWORD: '' } });
    expect(me.exitCode, me.stdout + me.stderr).toBe(0);
    expect(me.json.email).toBe('admin@example.test');
    expect(existsSync(legacy)).toBe(false);
    const stored = readFileSync(join(cli.home, 'credentials.json'), 'utf8');
    expect(JSON.parse(stored).local.token).toMatch(/^svc_/);
    const keys = await cli.run(['keys', 'list', '--json'], { env: { PLATFORM_ADMIN_PASSWORD: '' } });
    expect(JSON.stringify(keys.json)).toContain('platform CLI (local automatic sign-in)');
    expect(filesContaining(cli.home, 'Admin-Password-123')).toEqual([]);
  });

  it('a stale keys/admin.json (password changed since) is deleted all the same', async () => {
    const legacy = join(cli.home, 'keys', 'admin.json');
    writeFileSync(legacy, JSON.stringify({ email: 'admin@example.test', password: 'Not-The-Password-1' }), { mode: 0o600 });
    const me = await cli.run(['whoami', '--json'], { env: { PLATFORM_ADMIN_PASSWORD: '' } });
    expect(me.exitCode, me.stdout + me.stderr).toBe(0);
    expect(existsSync(legacy)).toBe(false);
  });
});
