import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { FIXTURE_PASSWORD, makeUser } from '../helpers/fixtures.js';
import { fromIp } from './from-ip.js';

/** The spec's throttle (spec 1 §5): 10 per IP and 50 per account per 15 minutes. */
const SPEC_THROTTLE = { signIn: { perIp: 10, perAccount: 50, windowMs: 900_000 } };

describe('POST /v1/auth/login', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon();
  });
  afterAll(() => d.close());

  it('returns the login shape', async () => {
    const r = await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(r.status).toBe(200);
    // Spec 1 §4.2's fields, plus the refresh token of issue 24 (docs/decisions/signin.md).
    expect(Object.keys(r.body).sort()).toEqual(['email', 'expires_at', 'must_change_password', 'refresh_expires_at', 'refresh_token', 'role', 'token']);
    expect(r.body.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(r.body).toMatchObject({ email: ADMIN_EMAIL, role: 'admin', must_change_password: false });
    expect(r.body.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(12 * 3600 - 60);
  });

  it('unknown user and wrong password share one 401 message', async () => {
    const unknown = await d.api('POST', '/v1/auth/login', { body: { email: 'ghost@example.test', password: ADMIN_PASSWORD } });
    const wrong = await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: 'Wrong-Password-1' } });
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body.error).toBe(wrong.body.error);
    expect(unknown.body.error).toBe('invalid email or password');
  });

  it('e-mail is matched case-insensitively; both fields are required', async () => {
    expect((await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD } })).status).toBe(200);
    expect((await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL } })).body.error).toBe('missing required field: password');
  });
});

describe('sign-in throttle', () => {
  it('10 attempts per IP, then 429 with Retry-After; the window reopens after 15 minutes', async () => {
    const clock = new ManualClock();
    const d = await startTestDaemon(SPEC_THROTTLE, { clock });
    try {
      for (let i = 0; i < 10; i++) {
        const r = await d.api('POST', '/v1/auth/login', { body: { email: `u${i}@example.test`, password: 'Wrong-Password-1' } });
        expect(r.status).toBe(401);
      }
      const blocked = await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      expect(blocked.status).toBe(429);
      expect(blocked.body.error).toMatch(/^too many sign-in attempts/);
      expect(blocked.headers.get('retry-after')).toBe('900');
      // Another client IP is not affected.
      expect((await fromIp(d.url, '127.0.0.2', 'POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).toBe(200);
      clock.advance(10 * 60_000);
      const still = await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      expect(still.status).toBe(429);
      expect(still.headers.get('retry-after')).toBe('300');
      clock.advance(5 * 60_000);
      expect((await d.api('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).toBe(200);
    } finally {
      await d.close();
    }
  });

  it('50 attempts per account across IPs, then 429 for that account only', async () => {
    const clock = new ManualClock();
    const d = await startTestDaemon(SPEC_THROTTLE, { clock });
    try {
      const victim = await makeUser(d); // one attempt (the fixture's own sign-in) from 127.0.0.1
      // 49 more wrong passwords from 7 addresses (7 each, under the per-IP limit), sent concurrently.
      const wrong = Array.from({ length: 49 }, (_, i) =>
        fromIp(d.url, `127.0.0.${2 + (i % 7)}`, 'POST', '/v1/auth/login', { body: { email: victim.email, password: 'Wrong-Password-1' } }),
      );
      expect((await Promise.all(wrong)).map((r) => r.status)).toEqual(Array(49).fill(401));
      const fresh = '127.0.0.100';
      const blocked = await fromIp(d.url, fresh, 'POST', '/v1/auth/login', { body: { email: victim.email, password: FIXTURE_PASSWORD } });
      expect(blocked.status).toBe(429);
      expect(blocked.body.error).toMatch(/^too many sign-in attempts/);
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      // The same fresh IP may still sign in to another account.
      expect((await fromIp(d.url, fresh, 'POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).toBe(200);
      clock.advance(900_000);
      expect((await fromIp(d.url, fresh, 'POST', '/v1/auth/login', { body: { email: victim.email, password: FIXTURE_PASSWORD } })).status).toBe(200);
    } finally {
      await d.close();
    }
  }, 90_000);
});
