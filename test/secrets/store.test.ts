import { readFileSync, existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { MasterKey } from '../../src/daemon/services/secrets/master-key.js';
import * as store from '../../src/daemon/services/secrets/store.js';
import { seal, valueAad } from '../../src/daemon/services/secrets/crypto.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
});
afterAll(() => d.close());

const base = () => `/v1/projects/${c.project.id}/secrets`;
const write = (name: string, value: string, token = c.member.token) => d.api('POST', base(), { token, body: { name, value } });

describe('secret writes (spec 2 §4.1)', () => {
  it('a first write is 201 version 1; writing the name again is 200 with the next version', async () => {
    const a = await write('db-password', 'first-value');
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ name: 'db-password', version: 1, created: true });
    expect(typeof a.body.note).toBe('string');
    const b = await write('db-password', 'second-value');
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ name: 'db-password', version: 2, created: false });
    expect(JSON.stringify([a.body, b.body])).not.toMatch(/first-value|second-value/);
  });

  it('rejects bad names, empty and oversize values, unknown fields and oversize bodies', async () => {
    for (const name of ['', '-lead', '_lead', 'a'.repeat(64), 'has space', 'dot.name']) {
      const r = await write(name, 'v');
      expect(r.status, name).toBe(400);
      expect(r.body.error).toMatch(/name/);
    }
    expect((await write('a'.repeat(63), 'v')).status).toBe(201);
    const empty = await write('empty', '');
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/value.*empty/);
    const big = await write('big', 'x'.repeat(65537));
    expect(big.status).toBe(400);
    expect(big.body.error).toMatch(/65536 bytes/);
    expect((await write('max', 'x'.repeat(65536))).status).toBe(201);
    // Multi-byte characters count as bytes: 32769 two-byte characters are 65538 bytes.
    expect((await write('wide', 'é'.repeat(32769))).status).toBe(400);
    const extra = await d.api('POST', base(), { token: c.member.token, body: { name: 'x1', value: 'v', labels: {} } });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatch(/unknown body field: labels/);
    const huge = await d.api('POST', base(), { token: c.member.token, body: { name: 'x2', value: 'x'.repeat(129 * 1024) } });
    expect(huge.status).toBe(413);
    // A value that does not fit the store is never echoed back in the error.
    expect(big.text).not.toContain('xxxxxxxxxx');
  });
});

describe('errors never echo a value', () => {
  it('malformed JSON, a bad name beside a value and a wrongly typed value answer 400 without the value', async () => {
    const marker = 'ECHO-MARKER-7f3a';
    for (const raw of [`{"name":"a","value":"${marker}"`, `{"name":"a","value":"${marker}",}`, `{"name":"a b","value":"${marker}"}`, `{"name":"a","value":["${marker}"]}`, `{"name":"a","value":"${marker}","extra":1}`]) {
      const r = await d.api('POST', base(), { token: c.member.token, raw, headers: { 'content-type': 'application/json' } });
      expect(r.status, raw).toBe(400);
      expect(r.text, raw).not.toContain(marker);
    }
  });
});

describe('metadata reads', () => {
  it('lists names and versions only, with path_prefix, and pages', async () => {
    for (const n of ['page-a', 'page-b', 'page-c']) await write(n, `value-of-${n}`);
    const r = await d.api('GET', `${base()}?page_size=2`, { token: c.member.token });
    expect(r.status).toBe(200);
    expect(r.body.path_prefix).toBe(`secret/data/${c.project.short}/`);
    expect(r.body.secrets).toHaveLength(2);
    expect(Object.keys(r.body.secrets[0]).sort()).toEqual(['created_at', 'current_version', 'name', 'updated_at']);
    const all: string[] = [];
    let token: string | undefined;
    do {
      const page = await d.api('GET', `${base()}?page_size=2${token ? `&page_token=${token}` : ''}`, { token: c.member.token });
      all.push(...page.body.secrets.map((s: { name: string }) => s.name));
      token = page.body.next_page_token;
    } while (token);
    expect(all).toEqual([...all].sort());
    expect(all).toEqual(expect.arrayContaining(['db-password', 'page-a', 'page-b', 'page-c']));
    expect(r.text).not.toMatch(/value-of-/);
  });

  it('gets one secret with versions; used_by is absent when nothing binds it', async () => {
    const r = await d.api('GET', `${base()}/db-password`, { token: c.member.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'db-password', current_version: 2 });
    expect(r.body.versions).toEqual([
      { version: 1, created_at: expect.any(String), destroyed: false },
      { version: 2, created_at: expect.any(String), destroyed: false },
    ]);
    expect('used_by' in r.body).toBe(false);
    expect(r.text).not.toMatch(/first-value|second-value/);
    const v = await d.api('GET', `${base()}/db-password/versions`, { token: c.member.token });
    expect(v.status).toBe(200);
    expect(v.body).toEqual({ name: 'db-password', current_version: 2, versions: r.body.versions });
    expect((await d.api('GET', `${base()}/absent`, { token: c.member.token })).status).toBe(404);
    expect((await d.api('GET', `${base()}/absent/versions`, { token: c.member.token })).status).toBe(404);
  });

  it('answers 404 for an unknown custom verb', async () => {
    for (const path of [`${base()}/db-password:bogus`, `${base()}:bogus`, `${base()}/db-password:reveal2`]) {
      const r = await d.api('POST', path, { token: c.admin.token, body: {} });
      expect(r.status, path).toBe(404);
      expect(r.body.request_id).toBeTruthy();
    }
  });
});

describe('the reserved cloud-account-credential', () => {
  it('is invisible: create, get, versions, delete, reveal and the name token answer 404; listings omit it', async () => {
    // Stored by the platform itself, not through this API.
    const key = new MasterKey(d.db, d.home, true).require();
    store.addVersion(d.db, c.project.id, 'cloud-account-credential', (v) => seal(key, Buffer.from('cloud-cred'), valueAad(c.project.id, 'cloud-account-credential', v)), new Date().toISOString());
    const n = 'cloud-account-credential';
    expect((await write(n, 'x', c.admin.token)).status).toBe(404);
    expect((await d.api('GET', `${base()}/${n}`, { token: c.admin.token })).status).toBe(404);
    expect((await d.api('GET', `${base()}/${n}/versions`, { token: c.admin.token })).status).toBe(404);
    expect((await d.api('DELETE', `${base()}/${n}`, { token: c.admin.token })).status).toBe(404);
    expect((await d.api('POST', `${base()}/${n}:reveal`, { token: c.admin.token, body: {} })).status).toBe(404);
    expect((await d.api('POST', `${base()}/${n}:issue-token`, { token: c.admin.token, body: {} })).status).toBe(404);
    const all = await d.api('GET', `${base()}?page_size=200`, { token: c.admin.token });
    expect(all.body.secrets.map((s: { name: string }) => s.name)).not.toContain(n);
    const missing = await d.api('GET', `${base()}/never-existed`, { token: c.admin.token });
    expect((await d.api('GET', `${base()}/${n}`, { token: c.admin.token })).body.error).toBe(missing.body.error.replace('never-existed', n));
  });
});

describe('roles', () => {
  it('members and member keys read and write; reveal and delete need project admin (403); outsiders get 404', async () => {
    await write('role-check', 'role-value');
    expect((await write('role-check', 'by-key', c.sa.token)).status).toBe(200);
    expect((await d.api('GET', base(), { token: c.sa.token })).status).toBe(200);
    for (const token of [c.member.token, c.sa.token]) {
      const rv = await d.api('POST', `${base()}/role-check:reveal`, { token, body: { reason: 'checking' } });
      expect(rv.status).toBe(403);
      expect(rv.text).not.toContain('role-value');
      expect((await d.api('DELETE', `${base()}/role-check`, { token })).status).toBe(403);
    }
    // Platform admin holds metadata authority only: contents need a project role.
    expect((await d.api('GET', base(), { token: c.platformAdmin.token })).status).toBe(403);
    const routes: Array<[string, string, unknown?]> = [
      ['GET', base()],
      ['POST', base(), { name: 'x', value: 'y' }],
      ['GET', `${base()}/role-check`],
      ['GET', `${base()}/role-check/versions`],
      ['DELETE', `${base()}/role-check`],
      ['POST', `${base()}/role-check:reveal`, {}],
      ['POST', `${base()}/role-check:issue-token`, {}],
      ['POST', `${base()}:issue-token`, {}],
      ['GET', `/v1/projects/${c.project.id}/secret-maps`],
      ['GET', `/v1/projects/${c.project.id}/agents/a1/secret-maps`],
      ['PUT', `/v1/projects/${c.project.id}/agents/a1/secret-maps/X`, { secret_name: 'role-check' }],
      ['DELETE', `/v1/projects/${c.project.id}/agents/a1/secret-maps/X`],
      ['POST', `/v1/projects/${c.project.id}/agents/a1/secret-maps:apply`],
    ];
    for (const [m, p, body] of routes) {
      const r = await d.api(m, p, { token: c.outsider.token, body });
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.body.error).toBe('project not found');
    }
    const admin = await d.api('DELETE', `${base()}/role-check`, { token: c.admin.token });
    expect(admin.status).toBe(200);
  });
});

describe('delete', () => {
  it('destroys every version; the name can be written again and keeps counting, old versions destroyed', async () => {
    await write('short-lived', 'v1');
    await write('short-lived', 'v2');
    const del = await d.api('DELETE', `${base()}/short-lived`, { token: c.admin.token });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ name: 'short-lived', deleted: true });
    expect((await d.api('GET', `${base()}/short-lived`, { token: c.member.token })).status).toBe(404);
    expect((await d.api('DELETE', `${base()}/short-lived`, { token: c.admin.token })).status).toBe(404);
    const ciphertexts = d.db.prepare(`SELECT ciphertext FROM sec_versions WHERE project_id = ? AND name = 'short-lived'`).all(c.project.id) as { ciphertext: Buffer | null }[];
    expect(ciphertexts.every((r) => r.ciphertext === null)).toBe(true);
    const again = await write('short-lived', 'v3');
    expect(again.status).toBe(201);
    expect(again.body.version).toBe(3);
    const v = await d.api('GET', `${base()}/short-lived/versions`, { token: c.member.token });
    expect(v.body.versions.map((x: { version: number; destroyed: boolean }) => [x.version, x.destroyed])).toEqual([[1, true], [2, true], [3, false]]);
    const old = await d.api('POST', `${base()}/short-lived:reveal`, { token: c.admin.token, body: { version: 1, reason: 'old' } });
    expect(old.status).toBe(404);
  });
});

describe('reveal', () => {
  it('reveals the current or a given version; a malformed or absent body reveals the current one', async () => {
    await write('revealed', 'reveal-one');
    await write('revealed', 'reveal-two');
    const cur = await d.api('POST', `${base()}/revealed:reveal`, { token: c.admin.token, body: { reason: 'incident 42' } });
    expect(cur.status).toBe(200);
    expect(cur.body).toMatchObject({ name: 'revealed', version: 2, value: 'reveal-two' });
    const v1 = await d.api('POST', `${base()}/revealed:reveal`, { token: c.admin.token, body: { version: 1, reason: 'diff' } });
    expect(v1.body).toMatchObject({ version: 1, value: 'reveal-one' });
    expect((await d.api('POST', `${base()}/revealed:reveal`, { token: c.admin.token, body: { version: 0 } })).body.version).toBe(2);
    for (const raw of ['{not json', '[1,2]', '{"version":"two"}', '']) {
      const r = await d.api('POST', `${base()}/revealed:reveal`, { token: c.admin.token, raw, headers: { 'content-type': 'application/json' } });
      expect(r.status, raw).toBe(200);
      expect(r.body).toMatchObject({ version: 2, value: 'reveal-two' });
    }
    expect((await d.api('POST', `${base()}/revealed:reveal`, { token: c.admin.token, body: { version: 9 } })).status).toBe(404);
    expect((await d.api('POST', `${base()}/nope:reveal`, { token: c.admin.token })).status).toBe(404);
  });

  it('is fail-closed: when the audit row cannot be written, 503 and no value', async () => {
    await write('guarded', 'guarded-value');
    const before = (d.db.prepare(`SELECT COUNT(*) AS n FROM acct_audit WHERE action = 'project.secret.reveal'`).get() as { n: number }).n;
    d.db.exec(`CREATE TRIGGER break_reveal_audit BEFORE INSERT ON acct_audit WHEN NEW.action = 'project.secret.reveal'
               BEGIN SELECT RAISE(ABORT, 'audit storage failure'); END`);
    try {
      const r = await d.api('POST', `${base()}/guarded:reveal`, { token: c.admin.token, body: { reason: 'should fail' } });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/audit/);
      expect(r.text).not.toContain('guarded-value');
      expect(r.body.value).toBeUndefined();
    } finally {
      d.db.exec('DROP TRIGGER break_reveal_audit');
    }
    const after = (d.db.prepare(`SELECT COUNT(*) AS n FROM acct_audit WHERE action = 'project.secret.reveal'`).get() as { n: number }).n;
    expect(after).toBe(before);
    const ok = await d.api('POST', `${base()}/guarded:reveal`, { token: c.admin.token, body: { reason: 'works again' } });
    expect(ok.body.value).toBe('guarded-value');
  });
});

describe('audit rows (spec 2 §6)', () => {
  it('writes, reveals and deletes are in the project audit log, without values', async () => {
    await write('audited', 'audited-value');
    await d.api('POST', `${base()}/audited:reveal`, { token: c.admin.token, body: { reason: 'audit check' } });
    await d.api('DELETE', `${base()}/audited`, { token: c.admin.token });
    const r = await d.api('GET', `/v1/projects/${c.project.id}/audit?page_size=200`, { token: c.member.token });
    expect(r.status).toBe(200);
    const mine = r.body.entries.filter((e: { target: string }) => e.target === 'audited');
    expect(mine.map((e: { action: string }) => e.action).sort()).toEqual(['project.secret.delete', 'project.secret.reveal', 'project.secret.write']);
    const reveal = mine.find((e: { action: string }) => e.action === 'project.secret.reveal');
    expect(reveal).toMatchObject({ actor: c.admin.email, details: { version: 1, reason: 'audit check' } });
    expect(r.text).not.toContain('audited-value');
  });
});

describe('encryption at rest', () => {
  it('the database files never contain a value, only AES-GCM ciphertext', async () => {
    const marker = `PLAINTEXT-MARKER-${Date.now()}-zq`;
    await write('at-rest', marker);
    await write('at-rest', marker + '-rotated');
    const files = ['platform.db', 'platform.db-wal', 'platform.db-shm'].map((f) => join(d.home, f)).filter(existsSync);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) {
      const bytes = readFileSync(f);
      expect(bytes.includes(Buffer.from(marker)), f).toBe(false);
      expect(bytes.includes(Buffer.from(marker, 'utf16le')), f).toBe(false);
    }
    // After a checkpoint folds the WAL into the main file, still nothing.
    d.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(join(d.home, 'platform.db')).includes(Buffer.from(marker))).toBe(false);
    const row = d.db.prepare(`SELECT ciphertext FROM sec_versions WHERE project_id = ? AND name = 'at-rest' AND version = 1`).get(c.project.id) as { ciphertext: Buffer };
    expect(row.ciphertext.length).toBe(12 + 16 + Buffer.byteLength(marker));
    const back = await d.api('POST', `${base()}/at-rest:reveal`, { token: c.admin.token, body: { version: 1 } });
    expect(back.body.value).toBe(marker);
  });

  it('keeps the master key in a 0600 file under keys/', () => {
    const st = statSync(join(d.home, 'keys', 'secrets-master.key'));
    expect(st.mode & 0o777).toBe(0o600);
  });
});

describe('sealed and unconfigured store', () => {
  it('answers 503 (never an empty list) while the master key is missing or wrong, and recovers when it returns', async () => {
    const file = join(d.home, 'keys', 'secrets-master.key');
    renameSync(file, file + '.away');
    try {
      for (const [m, p] of [['GET', base()], ['GET', `${base()}/db-password`], ['POST', `${base()}/db-password:issue-token`]] as const) {
        const r = await d.api(m, p, { token: c.admin.token, body: m === 'POST' ? {} : undefined });
        expect(r.status, p).toBe(503);
        expect(r.body.error).toMatch(/sealed/);
      }
      expect((await write('while-sealed', 'x', c.admin.token)).status).toBe(503);
    } finally {
      renameSync(file + '.away', file);
    }
    expect((await d.api('GET', base(), { token: c.admin.token })).status).toBe(200);
    const good = readFileSync(file);
    writeFileSync(file, Buffer.alloc(32, 7).toString('base64'));
    try {
      const r = await d.api('GET', base(), { token: c.admin.token });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/does not match/);
    } finally {
      writeFileSync(file, good);
    }
    expect((await d.api('GET', base(), { token: c.admin.token })).status).toBe(200);
  });

  it('answers 503 when the store is not configured', async () => {
    const off = await startTestDaemon({ secretsStore: 'off' });
    try {
      const token = await off.adminToken();
      const r = await off.api('GET', '/v1/projects/default/secrets', { token });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/not configured/);
      expect((await off.api('POST', '/v1/projects/default/secrets', { token, body: { name: 'a', value: 'b' } })).status).toBe(503);
    } finally {
      await off.close();
    }
  });

  it('answers 503 when the store is unreachable (database error), not an empty list', async () => {
    d.db.exec('ALTER TABLE sec_secrets RENAME TO sec_secrets_away');
    try {
      const r = await d.api('GET', base(), { token: c.admin.token });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/unreachable/);
    } finally {
      d.db.exec('ALTER TABLE sec_secrets_away RENAME TO sec_secrets');
    }
  });
});
