import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { FIXTURE_PASSWORD, cast, makeUser } from '../helpers/fixtures.js';

const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({}, { clock });
});
afterAll(() => d.close());

const createKey = (token: string, body: unknown) => d.api('POST', '/v1/users/me/keys', { token, body });

describe('personal API keys (spec 1 §4.9)', () => {
  it('the secret is shown once at creation and never listed', async () => {
    const u = await makeUser(d);
    const r = await createKey(u.token, { display_name: 'laptop' });
    expect(r.status).toBe(201);
    expect(r.body.secret).toMatch(/^svc_[a-z0-9]{12}_[A-Za-z0-9]{40}$/);
    expect(r.body.secret).toContain(r.body.key.key_id);
    expect(r.body.note).toMatch(/shown only once/);
    expect(Object.keys(r.body.key).sort()).toEqual(['created_at', 'display_name', 'id', 'key_id', 'kind', 'live', 'state']);
    expect(r.body.key).toMatchObject({ display_name: 'laptop', kind: 'personal', live: true, state: 'live' });
    const list = await d.api('GET', '/v1/users/me/keys', { token: u.token });
    expect(list.status).toBe(200);
    expect(list.body.keys).toHaveLength(1);
    const secretPart = r.body.secret.split('_')[2];
    expect(list.text).not.toContain(secretPart);
    expect(JSON.stringify(list.body.keys[0])).not.toMatch(/secret|hash/);
  });

  it('only a hash is stored: the secret bytes appear nowhere in the database files', async () => {
    const u = await makeUser(d);
    const { secret } = (await createKey(u.token, { display_name: 'hash-check' })).body;
    const secretPart: string = secret.split('_')[2];
    const rows = JSON.stringify(d.db.prepare('SELECT * FROM acct_api_keys').all());
    expect(rows).not.toContain(secretPart);
    d.db.pragma('wal_checkpoint(PASSIVE)');
    for (const f of ['platform.db', 'platform.db-wal']) {
      const file = join(d.home, f);
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      expect(bytes.includes(Buffer.from(secretPart)), f).toBe(false);
      expect(bytes.includes(Buffer.from(secret)), f).toBe(false);
    }
  });

  it('the key acts as its owner and its revocation is effective at once', async () => {
    const u = await makeUser(d);
    const { secret, key } = (await createKey(u.token, { display_name: 'ci' })).body;
    const me = await d.api('GET', '/v1/auth/me', { token: secret });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ email: u.email, role: 'user', must_change_password: false });
    expect((await d.api('GET', '/v1/users/me/keys', { token: secret })).status).toBe(200);
    const rv = await d.api('DELETE', `/v1/users/me/keys/${key.key_id}`, { token: u.token });
    expect(rv.status).toBe(200);
    expect(rv.body).toEqual({ revoked: key.key_id, note: expect.stringMatching(/immediately/) });
    const after = await d.api('GET', '/v1/auth/me', { token: secret });
    expect(after.status).toBe(401);
    expect(after.body.error).toMatch(/^this is a management endpoint/);
    const listed = (await d.api('GET', '/v1/users/me/keys', { token: u.token })).body.keys[0];
    expect(listed).toMatchObject({ state: 'revoked', live: false, revoked_at: expect.any(String) });
  });

  it("another user's key id answers 404, like an unknown one", async () => {
    const a = await makeUser(d);
    const b = await makeUser(d);
    const { key, secret } = (await createKey(a.token, { display_name: 'a' })).body;
    const other = await d.api('DELETE', `/v1/users/me/keys/${key.key_id}`, { token: b.token });
    const unknown = await d.api('DELETE', '/v1/users/me/keys/zzzzzzzzzzzz', { token: b.token });
    expect(other.status).toBe(404);
    expect(other.body.error).toBe(unknown.body.error);
    expect((await d.api('GET', '/v1/auth/me', { token: secret })).status).toBe(200);
    expect((await d.api('GET', '/v1/users/me/keys', { token: b.token })).body.keys).toEqual([]);
  });

  it('expires_in_days: 0 or absent is never, 1..3650 accepted, anything else 400', async () => {
    const u = await makeUser(d);
    const never = await createKey(u.token, { display_name: 'n', expires_in_days: 0 });
    expect(never.body.key.expires_at).toBeUndefined();
    const max = await createKey(u.token, { display_name: 'm', expires_in_days: 3650 });
    expect(Date.parse(max.body.key.expires_at) - clock.now()).toBe(3650 * 86_400_000);
    expect((await createKey(u.token, { display_name: 'one', expires_in_days: 1 })).status).toBe(201);
    for (const bad of [-1, 3651, 2.5, '7']) {
      const r = await createKey(u.token, { display_name: 'bad', expires_in_days: bad });
      expect(r.status, String(bad)).toBe(400);
      expect(r.body.error).toMatch(/invalid field expires_in_days/);
    }
    expect((await createKey(u.token, { display_name: '' })).status).toBe(400);
    expect((await createKey(u.token, {})).body.error).toBe('missing required field: display_name');
    expect((await createKey(u.token, { display_name: 'x', scope: 'all' })).body.error).toBe('unknown body field: scope');
  });

  it('an expired key is treated as no credential (401) and lists as expired', async () => {
    const u = await makeUser(d);
    const { secret } = (await createKey(u.token, { display_name: 'short-lived', expires_in_days: 1 })).body;
    clock.advance(86_400_000 - 1000);
    expect((await d.api('GET', '/v1/auth/me', { token: secret })).body.expires_at).toBe(Math.floor((clock.now() + 1000) / 1000));
    clock.advance(1000);
    expect((await d.api('GET', '/v1/auth/me', { token: secret })).status).toBe(401);
    const token = await d.login(u.email, FIXTURE_PASSWORD);
    expect((await d.api('GET', '/v1/users/me/keys', { token })).body.keys[0]).toMatchObject({ state: 'expired', live: false });
  });

  it('machine credentials cannot list, create or revoke personal keys (403)', async () => {
    const c = await cast(d);
    for (const [m, body] of [['GET'], ['POST', { display_name: 'x' }]] as const) {
      expect((await d.api(m, '/v1/users/me/keys', { token: c.sa.token, body })).status).toBe(403);
    }
    expect((await d.api('DELETE', '/v1/users/me/keys/abc', { token: c.sa.token })).status).toBe(403);
  });

  it('create and revoke are audited without the secret', async () => {
    const u = await makeUser(d);
    const { secret, key } = (await createKey(u.token, { display_name: 'aud' })).body;
    await d.api('DELETE', `/v1/users/me/keys/${key.key_id}`, { token: u.token });
    const rows = d.db.prepare('SELECT action, actor, target, details FROM acct_audit WHERE target = ? ORDER BY seq').all(key.key_id) as any[];
    expect(rows.map((r) => r.action)).toEqual(['key.create', 'key.revoke']);
    expect(rows.every((r) => r.actor === u.email)).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(secret.split('_')[2]);
  });
});
