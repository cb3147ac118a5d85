import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeUser } from '../helpers/fixtures.js';
import { fromIp } from './from-ip.js';

const clock = new ManualClock();
let d: TestDaemon;
let a: { token: string };
let b: { token: string };
beforeAll(async () => {
  d = await startTestDaemon({ rateLimit: { burst: 3, refillPerSecond: 1 } }, { clock });
  // Signing in is an anonymous request and takes from 127.0.0.1's bucket; refill before each test.
  a = await makeUser(d);
  clock.advance(10_000);
  b = await makeUser(d);
});
afterAll(() => d.close());

const refill = () => clock.advance(10_000);

describe('per-principal rate limit (spec 1 §8.7)', () => {
  it('a burst of 3, then 429 with Retry-After; one token per second refills', async () => {
    refill();
    for (let i = 0; i < 3; i++) expect((await d.api('GET', '/v1/auth/me', { token: a.token })).status).toBe(200);
    const r = await d.api('GET', '/v1/users/me/keys', { token: a.token });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(r.body.error).toMatch(/rate limit/);
    expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
    clock.advance(1000);
    expect((await d.api('GET', '/v1/auth/me', { token: a.token })).status).toBe(200);
    expect((await d.api('GET', '/v1/auth/me', { token: a.token })).status).toBe(429);
  });

  it('/healthz is never limited', async () => {
    refill();
    for (let i = 0; i < 20; i++) expect((await d.api('GET', '/healthz')).status).toBe(200);
    // ...and did not spend the anonymous bucket of this IP.
    expect((await d.api('GET', '/v1/invitations/inv_none')).status).toBe(404);
  });

  it('buckets are per principal: one caller exhausted leaves another untouched', async () => {
    refill();
    for (let i = 0; i < 3; i++) await d.api('GET', '/v1/auth/me', { token: a.token });
    expect((await d.api('GET', '/v1/auth/me', { token: a.token })).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await d.api('GET', '/v1/auth/me', { token: b.token })).status).toBe(200);
    // Anonymous callers from this IP have their own bucket too.
    expect((await d.api('GET', '/v1/invitations/inv_none')).status).toBe(404);
  });

  it('anonymous callers are limited per IP', async () => {
    refill();
    for (let i = 0; i < 3; i++) expect((await d.api('GET', '/v1/invitations/inv_none')).status).toBe(404);
    const limited = await d.api('POST', '/v1/auth/login', { body: { email: 'x@example.test', password: 'y' } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another client address has its own bucket.
    expect((await fromIp(d.url, '127.0.0.9', 'GET', '/v1/invitations/inv_none')).status).toBe(404);
    // An unrouted path is answered 404 before the limiter; a credentialed caller is not limited by the IP's bucket.
    expect((await d.api('GET', '/v1/auth/me', { token: b.token })).status).toBe(200);
  });
});
