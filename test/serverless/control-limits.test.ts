import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { controlEnv, type ControlEnv } from './control-helpers.js';

/**
 * Spec 2 §8: 100 requests per second, burst 200, per principal (health exempt), 429 with
 * Retry-After; spec 2 §4.3: 503 on every project-scoped route when the database cannot be used.
 */
describe('rate limit', () => {
  let e: ControlEnv;
  const clock = new ManualClock();
  beforeAll(async () => {
    // The daemon-wide limiter stays off (test default): only the area's own limit applies.
    e = await controlEnv({}, undefined, clock);
  });
  afterAll(() => e.d.close());

  it('burst of 200 per principal, then 429 with Retry-After; tokens come back at 100 per second', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await e.call('GET', '')).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const limited = await e.call('GET', '');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.body.error).toMatch(/rate limit/);
    // Writes and other routes of the area share the bucket.
    expect((await e.call('POST', '', { name: 'x', image: 'nginx' })).status).toBe(429);
    // Another principal has a bucket of its own; health is exempt.
    expect((await e.call('GET', '', undefined, e.people.admin.token)).status).toBe(200);
    for (let i = 0; i < 250; i++) expect((await e.d.api('GET', `${e.base}/healthz`)).status).toBe(200);
    // Other areas are not limited by this one's bucket.
    expect((await e.d.api('GET', `/v1/projects/${e.people.project.id}`, { token: e.people.member.token })).status).toBe(200);
    clock.advance(10);
    expect((await e.call('GET', '')).status).toBe(200);
    expect((await e.call('GET', '')).status).toBe(429);
    clock.advance(1000);
    const again: number[] = [];
    for (let i = 0; i < 101; i++) again.push((await e.call('GET', '')).status);
    expect(again.slice(0, 100).every((s) => s === 200)).toBe(true);
    expect(again[100]).toBe(429);
  });
});

describe('database unavailable', () => {
  let e: ControlEnv;
  beforeAll(async () => {
    e = await controlEnv();
    expect((await e.call('POST', '', { name: 'svc', image: 'nginx' })).status).toBe(202);
  });
  afterAll(() => e.d.close().catch(() => undefined));

  it('a database locked by another process gives 503 on writes, and service resumes once released', async () => {
    e.d.db.pragma('busy_timeout = 50');
    const other = new Database(join(e.d.home, 'platform.db'));
    try {
      other.exec('BEGIN IMMEDIATE');
      other.prepare("INSERT INTO schema_migrations (area, version, applied_at) VALUES ('lock-test', 1, 'now')").run();
      const r = await e.call('POST', '', { name: 'locked', image: 'nginx' });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/^the platform database is unreachable \(SQLITE_BUSY\)/);
      expect(r.body.request_id).toEqual(expect.any(String));
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    expect((await e.call('POST', '', { name: 'locked', image: 'nginx' })).status).toBe(202);
  });

  it('a closed database gives 503 on every project-scoped route; health stays 200 and says why', async () => {
    e.d.db.close();
    for (const [m, p, b] of [
      ['GET', '', undefined],
      ['POST', '', { name: 'x', image: 'nginx' }],
      ['GET', '/svc', undefined],
      ['PATCH', '/svc', { env: {} }],
      ['DELETE', '/svc', undefined],
      ['GET', '/svc/revisions', undefined],
      ['POST', '/svc:set-traffic', { traffic: [{ latest_revision: true, percent: 100 }] }],
      ['GET', '/svc/logs', undefined],
      ['GET', '/svc/spec', undefined],
      ['GET', '/svc/metrics', undefined],
      ['POST', '/sources', undefined],
    ] as const) {
      const r = await e.call(m, p, b);
      expect(r.status, `${m} ${p}`).toBe(503);
      expect(r.body.error).toMatch(/platform database is unreachable/);
    }
    const h = await e.d.api('GET', `${e.base}/healthz`);
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: 'degraded', service: 'serverless-api', database: 'unreachable', database_detail: expect.stringMatching(/not open/) });
  });
});
