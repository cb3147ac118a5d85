import { execFile } from 'node:child_process';
import { renameSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';

/**
 * The Vault API beyond the KV read (issue 16 §5): token lookup-self and renew-self, metadata, LIST
 * and ?list=true, sys/health and sys/seal-status, driven by hvac (Debian's python3-hvac, installed
 * for /usr/bin/python3 by scripts/test-all.sh) and over raw sockets for the LIST method.
 */
const run = promisify(execFile);
const SYSTEM_PYTHON = '/usr/bin/python3';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let projectToken: { token: string; read: { addr: string; path: string } };
let nameToken: { token: string; read: { addr: string; path: string } };

beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
  for (const [name, value] of [['api-key', 'k-one'], ['api-key', 'k-two'], ['db-url', 'postgres://u:p@h/db']]) {
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name, value } });
  }
  projectToken = (await d.api('POST', `/v1/projects/${c.project.id}/secrets:issue-token`, { token: c.member.token })).body;
  nameToken = (await d.api('POST', `/v1/projects/${c.project.id}/secrets/api-key:issue-token`, { token: c.member.token })).body;
});
afterAll(() => d.close());

/** Sends raw bytes and returns everything the daemon answers until it closes the connection. */
function rawExchange(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(d.port, '127.0.0.1', () => s.write(bytes));
    const chunks: Buffer[] = [];
    s.on('data', (b: Buffer) => chunks.push(b));
    s.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    s.on('error', reject);
  });
}
const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
interface VaultResponse {
  status: number;
  json(): Promise<any>;
}
const vaultGet = (path: string, token = projectToken.token, init: RequestInit = {}): Promise<VaultResponse> =>
  fetch(`${projectToken.read.addr}/v1/${path}`, { ...init, headers: { 'X-Vault-Token': token, ...(init.headers as Record<string, string>) } });

describe('hvac against the daemon', () => {
  it('is_authenticated, KV v2 reads, list, metadata, health, seal status, lookup-self and renew-self', async () => {
    const { stdout } = await run(SYSTEM_PYTHON, [join(import.meta.dirname, 'hvac-client.py'), projectToken.read.addr, projectToken.token, nameToken.token, c.project.short, 'api-key'], {
      timeout: 30_000,
    });
    const out = JSON.parse(stdout);
    expect(out.authenticated).toBe(true);
    expect(out).toMatchObject({ value: 'k-two', version: 2, first: 'k-one', keys: ['api-key', 'db-url'], current_version: 2, versions: ['1', '2'] });
    expect(out.health_head).toBe(200);
    expect(out.health).toMatchObject({ initialized: true, sealed: false, standby: false, version: expect.any(String) });
    expect(out.seal).toMatchObject({ type: 'shamir', initialized: true, sealed: false, t: 1, n: 1 });
    expect(out.lookup).toMatchObject({ renewable: true, policies: ['platform-secret-read'], type: 'service', id: projectToken.token });
    expect(out.lookup.ttl).toBeGreaterThan(290);
    expect(out.lookup.ttl).toBeLessThanOrEqual(300);
    expect(out.renewed).toMatchObject({ client_token: projectToken.token, lease_duration: 600, renewable: true, policies: ['platform-secret-read'] });
    expect(out.ttl_after_renew).toBeGreaterThan(590);
    // Never past 3600 s after issue (spec 2's clamp plays Vault's explicit max TTL), said in warnings.
    expect(out.capped.lease_duration).toBeGreaterThan(3590);
    expect(out.capped.lease_duration).toBeLessThanOrEqual(3600);
    expect(out.capped.renewable).toBe(false);
    expect(out.capped.warnings[0]).toMatch(/capped/);
    expect(out.bad_version).toMatch(/invalid version .*abc.*non-negative integer/);
    expect(out).toMatchObject({ scoped_authenticated: true, scoped_value: 'k-two', scoped_list: 'forbidden', forged_authenticated: false });
  }, 40_000);
});

describe('LIST and ?list=true', () => {
  it("the LIST method (which Node's parser does not know) answers like GET ?list=true on a connection that stays usable", async () => {
    const list = (path: string, token?: string) =>
      `LIST /vault/v1/secret/metadata/${path} HTTP/1.1\r\nHost: x\r\n${token ? `X-Vault-Token: ${token}\r\n` : ''}Connection: close\r\n\r\n`;
    const raw = await rawExchange(list(`${c.project.short}/`, projectToken.token));
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(bodyOf(raw).data).toEqual({ keys: ['api-key', 'db-url'] });
    const viaGet = await vaultGet(`secret/metadata/${c.project.short}?list=true`);
    expect(viaGet.status).toBe(200);
    expect((await viaGet.json()).data).toEqual({ keys: ['api-key', 'db-url'] });
    // A keep-alive LIST leaves the connection usable: a second request on it is answered too.
    const two = await rawExchange(
      `LIST /vault/v1/secret/metadata/${c.project.short} HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${projectToken.token}\r\n\r\n` +
        `GET /vault/v1/sys/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(two.match(/HTTP\/1\.1 200 OK\r\n/g), two).toHaveLength(2);
    // Scope holds on LIST too: no token, a name-scoped token, another project.
    expect(bodyOf(await rawExchange(list(c.project.short)))).toEqual({ errors: ['permission denied', 'missing client token'] });
    expect(await rawExchange(list(c.project.short, nameToken.token))).toMatch(/^HTTP\/1\.1 403 /);
    expect(await rawExchange(list('zzzzzz', projectToken.token))).toMatch(/^HTTP\/1\.1 403 /);
    // LIST anywhere else is a method the route does not have (405 naming the allowed ones), and the daemon keeps serving.
    const elsewhere = await rawExchange('LIST /v1/projects HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(elsewhere).toMatch(/^HTTP\/1\.1 405 /);
    expect(elsewhere).toMatch(/\r\nAllow: [A-Z, ]*GET/i);
    expect((await d.api('GET', '/healthz')).status).toBe(200);
  });

  it('metadata of one secret: versions with their times, never a value; absent is 404 with no text', async () => {
    const r = await vaultGet(`secret/metadata/${c.project.short}/api-key`);
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.data).toMatchObject({ current_version: 2, oldest_version: 1, versions: { '1': { destroyed: false, deletion_time: '' }, '2': { destroyed: false } } });
    expect(JSON.stringify(body)).not.toMatch(/k-one|k-two/);
    const gone = await vaultGet(`secret/metadata/${c.project.short}/missing`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ errors: [] });
    expect((await vaultGet(`secret/metadata/${c.project.short}/db-url`, nameToken.token)).status).toBe(403);
  });
});

describe('reads and the rest of the Vault surface', () => {
  it('?version must be digits: abc, -1 and 1.5 are 400; 0 is the current version', async () => {
    for (const bad of ['abc', '-1', '1.5', '1e3']) {
      const r = await vaultGet(`secret/data/${c.project.short}/api-key?version=${bad}`);
      expect(r.status, bad).toBe(400);
      expect((await r.json()).errors[0]).toMatch(/invalid version/);
    }
    expect((await (await vaultGet(`secret/data/${c.project.short}/api-key?version=0`)).json()).data.data.value).toBe('k-two');
  });

  it('renew-self refuses a malformed increment, and a forged token, the Vault way', async () => {
    const t = (await d.api('POST', `/v1/projects/${c.project.id}/secrets:issue-token`, { token: c.member.token, body: { ttl_seconds: 60 } })).body;
    const renew = (body: string, token = t.token) => vaultGet('auth/token/renew-self', token, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    expect((await renew('{"increment":"soon"}')).status).toBe(400);
    expect((await renew('not json')).status).toBe(400);
    expect((await renew('{}', 'pst_forged')).status).toBe(403);
    const ok = await renew('{"increment":120}');
    expect(ok.status).toBe(200);
    expect((await ok.json()).auth.lease_duration).toBe(120);
    // A renewal never shortens a token.
    expect((await (await renew('{"increment":"1s"}')).json()).auth.lease_duration).toBeGreaterThan(100);
  });

  it("the vault CLI's kv preflight finds secret/ on KV version 2", async () => {
    const r = await vaultGet(`sys/internal/ui/mounts/secret/data/${c.project.short}/api-key`);
    expect(r.status).toBe(200);
    expect((await r.json()).data).toMatchObject({ path: 'secret/', type: 'kv', options: { version: '2' } });
    expect((await vaultGet('sys/internal/ui/mounts/cubbyhole/x')).status).toBe(403);
    expect((await vaultGet('sys/internal/ui/mounts/secret/x', 'pst_forged')).status).toBe(403);
  });

  it('paths this store does not serve are Vault 404s, whatever the method', async () => {
    for (const [method, path] of [['GET', 'sys/mounts'], ['POST', `secret/data/${c.project.short}/api-key`], ['DELETE', 'secret/metadata/x/y']] as const) {
      const r = await vaultGet(path, projectToken.token, { method });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect((await r.json()).errors[0]).toMatch(/no handler for route/);
    }
  });

  it('sealed: seal-status says so and health is 503 (or the sealedcode asked for); tokens get 503', async () => {
    const keyFile = join(d.home, 'keys', 'secrets-master.key');
    renameSync(keyFile, `${keyFile}.away`);
    try {
      expect(await (await vaultGet('sys/seal-status')).json()).toMatchObject({ initialized: true, sealed: true });
      const health = await vaultGet('sys/health');
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ sealed: true });
      expect((await vaultGet('sys/health?sealedcode=200')).status).toBe(200);
      expect((await vaultGet('sys/health?sealedcode=abc')).status).toBe(400);
      const lookup = await vaultGet('auth/token/lookup-self');
      expect(lookup.status).toBe(503);
      expect(await lookup.json()).toEqual({ errors: ['Vault is sealed'] });
    } finally {
      renameSync(`${keyFile}.away`, keyFile);
    }
    expect((await vaultGet('sys/health')).status).toBe(200);
  });
});
