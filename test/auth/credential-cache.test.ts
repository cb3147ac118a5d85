import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginToken, PROCESS_ADMIN, spawnDaemonProcess, type DaemonProcess, apiCall } from '../helpers/daemon-process.js';

/**
 * The daemon remembers resolved credentials (docs/decisions/speed-daemon.md): each case first
 * makes the credential work twice (the second request is answered from the cache), then takes it
 * away and expects the very next request refused, never a stale 200.
 */
let home: string;
let d: DaemonProcess;
let admin: string;

const call = (method: string, path: string, token: string, body?: unknown) => apiCall(d.url, method, path, token, body);
const me = (token: string) => call('GET', '/v1/auth/me', token);

/** A fresh account signed in, its password already its own (no first-login gate). */
async function person(email: string, role: 'user' | 'admin' = 'user'): Promise<{ email: string; password: string; token: string }> {
  const password = 'Cache-Test-Password-1';
  expect((await call('POST', '/v1/users', admin, { email, role, password })).status).toBe(201);
  let token = await loginToken(d.url, { email, password });
  const changed = await call('POST', '/v1/auth/change-password', token, { current_password: password, new_password: `${password}x` });
  if (changed.status === 200) token = changed.body.token;
  return { email, password: `${password}x`, token };
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'platform-credcache-'));
  // Many sign-ins from one address in a few seconds: the sign-in limits are not what is tested here.
  d = await spawnDaemonProcess(home, { PLATFORM_SIGNIN_LIMIT_PER_IP: '1000', PLATFORM_SIGNIN_LIMIT_PER_ACCOUNT: '1000' });
  admin = await loginToken(d.url, PROCESS_ADMIN);
});
afterAll(async () => {
  d?.child.kill('SIGTERM');
  await d?.exited;
  rmSync(home, { recursive: true, force: true });
});

describe('cached credential verification honours revocation at once', () => {
  it('a session token revoked (logout) is refused on the next request', async () => {
    const p = await person('logout@example.test');
    expect((await me(p.token)).status).toBe(200);
    expect((await me(p.token)).status).toBe(200);
    expect((await call('POST', '/v1/auth/revoke', p.token, { token: p.token })).status).toBe(200);
    const after = await me(p.token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/invalid_token/);
  });

  it('a personal API key deleted is refused on the next request', async () => {
    const p = await person('keys@example.test');
    const created = await call('POST', '/v1/users/me/keys', p.token, { display_name: 'laptop' });
    expect(created.status).toBe(201);
    const key = created.body.secret as string;
    expect((await me(key)).body.email).toBe(p.email);
    expect((await me(key)).status).toBe(200);
    expect((await call('DELETE', `/v1/users/me/keys/${created.body.key.id}`, p.token)).status).toBeLessThan(300);
    expect((await me(key)).status).toBe(401);
  });

  it('a password reset by an admin gates the held token at once (first-login gate re-read)', async () => {
    const p = await person('password@example.test');
    expect((await call('GET', '/v1/projects', p.token)).status).toBe(200);
    expect((await call('GET', '/v1/projects', p.token)).status).toBe(200);
    expect((await call('POST', `/v1/users/${p.email}/reset-password`, admin)).status).toBe(200);
    // The cached principal said "password already changed": the next request must see the reset.
    expect([401, 403]).toContain((await call('GET', '/v1/projects', p.token)).status);
    // The user's own password change (which keeps its other sessions, as before) is seen at once too.
    const q = await person('password2@example.test');
    const other = await loginToken(d.url, { email: q.email, password: q.password });
    expect((await me(other)).body.must_change_password).toBe(false);
    const changed = await call('POST', '/v1/auth/change-password', q.token, { current_password: q.password, new_password: 'Cache-Test-Password-2y' });
    expect(changed.status).toBe(200);
    expect((await me(other)).status).toBe(200);
    const old = await fetch(`${d.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: q.email, password: q.password }) });
    expect(old.status).toBe(401);
  });

  it('an account deleted and a role taken away take effect on the next request', async () => {
    const boss = await person('boss@example.test', 'admin');
    expect((await call('GET', '/v1/users', boss.token)).status).toBe(200);
    expect((await call('GET', '/v1/users', boss.token)).status).toBe(200);
    expect((await call('PATCH', `/v1/users/${boss.email}`, admin, { role: 'user' })).status).toBe(200);
    expect((await call('GET', '/v1/users', boss.token)).status).toBe(403);

    const gone = await person('gone@example.test');
    expect((await me(gone.token)).status).toBe(200);
    expect((await me(gone.token)).status).toBe(200);
    expect((await call('DELETE', `/v1/users/${gone.email}`, admin)).status).toBeLessThan(300);
    expect((await me(gone.token)).status).toBe(401);
  });
});
