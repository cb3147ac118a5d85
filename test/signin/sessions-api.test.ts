import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * The session routes under a manual clock: refresh rotation with reuse detection, the refresh
 * lifetime, revocation of an expired session token, and device codes that expire or are spent.
 */
const clock = new ManualClock(Date.parse('2026-06-01T08:00:00Z'));
let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({}, { clock });
});
afterAll(() => d.close());

const login = async () => (await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).body as { token: string; refresh_token: string; refresh_expires_at: number };
const refresh = (refresh_token: string) => d.api('POST', '/v1/auth/refresh', { body: { refresh_token } });
const me = async (token: string) => (await d.api('GET', '/v1/auth/me', { token })).status;

describe('refresh tokens', () => {
  it('rotate: the old one is refused, within a minute without ending the session, later ending it', async () => {
    const s = await login();
    const r1 = await refresh(s.refresh_token);
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(s.refresh_token);
    // Reused within the grace minute (two commands racing): refused, the session lives on.
    const racing = await refresh(s.refresh_token);
    expect(racing.status).toBe(401);
    expect(racing.body.error).toBe('refresh token invalid, expired or revoked: sign in again');
    expect(await me(r1.body.token)).toBe(200);
    // Reused later: it was copied; the whole session ends.
    clock.advance(61_000);
    expect((await refresh(s.refresh_token)).status).toBe(401);
    expect(await me(r1.body.token)).toBe(401);
    // A refused token says so (RFC 6750), which is what the CLI refreshes on; a wrong password does not.
    expect((await d.api('GET', '/v1/auth/me', { token: r1.body.token })).headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect((await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: 'Wrong-Password-1' } })).headers.get('www-authenticate')).toBeNull();
    expect((await refresh(r1.body.refresh_token)).status).toBe(401);
    const audit = d.db.prepare(`SELECT COUNT(*) AS n FROM acct_audit WHERE action = 'auth.refresh_reused'`).get() as { n: number };
    expect(audit.n).toBe(1);
  });

  it('last 30 days from their last use, and no longer', async () => {
    const s = await login();
    expect(s.refresh_expires_at).toBe(Math.floor(clock.now() / 1000) + 30 * 86_400);
    clock.advance(29 * 86_400_000);
    const kept = await refresh(s.refresh_token);
    expect(kept.status).toBe(200);
    clock.advance(30 * 86_400_000 + 1000);
    expect((await refresh(kept.body.refresh_token)).status).toBe(401);
  });

  it('an expired session token still ends its session; unknown tokens answer revoked false', async () => {
    const s = await login();
    clock.advance(12 * 3_600_000 + 1000);
    expect(await me(s.token)).toBe(401);
    expect((await d.api('POST', '/v1/auth/revoke', { body: { token: s.token } })).body).toEqual({ revoked: true });
    expect((await refresh(s.refresh_token)).status).toBe(401);
    expect((await d.api('POST', '/v1/auth/revoke', { body: { token: 'not-a-token' } })).body).toEqual({ revoked: false });
    expect((await d.api('POST', '/v1/auth/revoke', { body: { token: s.token } })).body).toEqual({ revoked: false });
    expect((await d.api('POST', '/v1/auth/revoke', { body: { token: s.token, hint: 'x' } })).body.error).toBe('unknown body field: hint');
  });
});

describe('device codes', () => {
  it('expire after their lifetime and are spent by the poll that gets the session', async () => {
    const poll = (device_code: string) => d.api('POST', '/v1/auth/device/token', { body: { device_code } });
    const stale = (await d.api('POST', '/v1/auth/device/code', { body: {} })).body;
    expect(stale).toMatchObject({ expires_in: 600, interval: 5, user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/) });
    clock.advance(600_000);
    expect((await poll(stale.device_code)).body).toMatchObject({ code: 'expired_token', error: 'the device code expired before it was approved: start again' });

    // Approved through the service the page calls, then polled twice.
    const fresh = (await d.api('POST', '/v1/auth/device/code', { body: { client_name: 'test' } })).body;
    const { pendingCode, decideDeviceSignIn } = await import('../../src/daemon/services/auth/device-flow.js');
    const { userByEmail } = await import('../../src/daemon/services/auth/store.js');
    const pending = pendingCode(d.app.ctx, fresh.user_code.toLowerCase());
    expect(pending).toMatchObject({ clientName: 'test' });
    expect(decideDeviceSignIn(d.app.ctx, pending!.id, userByEmail(d.db, ADMIN_EMAIL)!, true, 'req_test')).toBe(true);
    const granted = await poll(fresh.device_code);
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ email: ADMIN_EMAIL, refresh_token: expect.stringMatching(/^rt_/) });
    expect(await me(granted.body.token)).toBe(200);
    clock.advance(5_000);
    expect((await poll(fresh.device_code)).body).toMatchObject({ code: 'invalid_grant' });
  });
});
