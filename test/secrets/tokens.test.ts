import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodeVault from 'node-vault';
import { ManualClock } from '../../src/daemon/clock.js';
import { createWorkloadKey } from '../../src/daemon/services/auth/keys.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';

/** Read tokens and the Vault KV v2 read path, read with the published `node-vault` client. */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let other: Awaited<ReturnType<typeof cast>>;
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  d = await startTestDaemon({}, { clock });
  c = await cast(d);
  other = await cast(d);
  for (const [name, value] of [['api-key', 'k-one'], ['api-key', 'k-two'], ['db-url', 'postgres://u:p@h/db']]) {
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name, value } });
  }
  await d.api('POST', `/v1/projects/${other.project.id}/secrets`, { token: other.member.token, body: { name: 'foreign', value: 'not-yours' } });
});
afterAll(() => d.close());

const base = () => `/v1/projects/${c.project.id}/secrets`;
const vault = (addr: string, token: string) => nodeVault({ apiVersion: 'v1', endpoint: addr, token });
/** node-vault rejects non-2xx answers; returns the status it saw. */
async function vaultStatus(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    return (e as { response?: { statusCode: number } }).response?.statusCode ?? -1;
  }
}

describe('issue-token', () => {
  it('mints a name-scoped token: ttl default 300, silently clamped to 3600, read location returned', async () => {
    const r = await d.api('POST', `${base()}/api-key:issue-token`, { token: c.member.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ttl_seconds: 300, read: { addr: `${d.url}/vault`, path: `secret/data/${c.project.short}/api-key` } });
    expect(r.body.token).toMatch(/^pst_/);
    expect(typeof r.body.note).toBe('string');
    expect((await d.api('POST', `${base()}/api-key:issue-token`, { token: c.member.token, body: { ttl_seconds: 99999 } })).body.ttl_seconds).toBe(3600);
    expect((await d.api('POST', `${base()}/api-key:issue-token`, { token: c.member.token, body: { ttl_seconds: 42 } })).body.ttl_seconds).toBe(42);
    for (const bad of [0, -5, 1.5, 'ten']) {
      const x = await d.api('POST', `${base()}/api-key:issue-token`, { token: c.member.token, body: { ttl_seconds: bad } });
      expect(x.status, String(bad)).toBe(400);
      expect(x.body.error).toMatch(/ttl_seconds/);
    }
    expect((await d.api('POST', `${base()}/api-key:issue-token`, { token: c.member.token, body: { ttl: 5 } })).status).toBe(400);
    expect((await d.api('POST', `${base()}/missing:issue-token`, { token: c.member.token })).status).toBe(404);
  });

  it('a name-scoped token reads exactly that secret through a stock Vault client, and nothing else', async () => {
    const t = (await d.api('POST', `${base()}/api-key:issue-token`, { token: c.member.token })).body;
    const v = vault(t.read.addr, t.token);
    const got = await v.read(t.read.path);
    expect(got.data.data).toEqual({ value: 'k-two' });
    expect(got.data.metadata).toMatchObject({ version: 2, destroyed: false });
    expect((await v.read(`${t.read.path}?version=1`)).data.data.value).toBe('k-one');
    expect(await vaultStatus(v.read(`secret/data/${c.project.short}/db-url`))).toBe(403);
    expect(await vaultStatus(v.read(`secret/data/${other.project.short}/foreign`))).toBe(403);
    expect(await vaultStatus(v.read(`kv/data/${c.project.short}/api-key`))).toBe(403);
    expect(await vaultStatus(vault(t.read.addr, 'pst_forged').read(t.read.path))).toBe(403);
    // The wire format is Vault's: errors as {errors: [...]}, never the platform envelope.
    const raw = await fetch(`${t.read.addr}/v1/secret/data/${c.project.short}/db-url`, { headers: { 'X-Vault-Token': t.token } });
    expect(raw.status).toBe(403);
    expect(await raw.json()).toEqual({ errors: ['permission denied'] });
    const none = await fetch(`${t.read.addr}/v1/${t.read.path}`);
    expect(none.status).toBe(403);
    // Figure: sequential reads through the Vault client (token lookup, AES-GCM open, JSON).
    const n = 200;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await v.read(t.read.path);
    const ms = performance.now() - t0;
    console.log(`vault KV v2 read through node-vault: ${(ms / n).toFixed(2)} ms per read, ${Math.round((n * 1000) / ms)} reads/s sequential`);
  });

  it('a project token reads every secret of its own project and nothing of another', async () => {
    const t = (await d.api('POST', `${base().replace('/secrets', '/secrets:issue-token')}`, { token: c.member.token, body: { ttl_seconds: 60 } })).body;
    expect(t.read.path).toBe(`secret/data/${c.project.short}/`);
    expect(t.ttl_seconds).toBe(60);
    const v = vault(t.read.addr, t.token);
    expect((await v.read(`${t.read.path}api-key`)).data.data.value).toBe('k-two');
    expect((await v.read(`${t.read.path}db-url`)).data.data.value).toBe('postgres://u:p@h/db');
    expect(await vaultStatus(v.read(`${t.read.path}absent`))).toBe(404);
    expect(await vaultStatus(v.read(`${t.read.path}cloud-account-credential`))).toBe(404);
    expect(await vaultStatus(v.read(`secret/data/${other.project.short}/foreign`))).toBe(403);
  });

  it('tokens expire (ManualClock) and die with their secret', async () => {
    const t = (await d.api('POST', `${base()}:issue-token`, { token: c.member.token, body: { ttl_seconds: 30 } })).body;
    const v = vault(t.read.addr, t.token);
    expect((await v.read(`${t.read.path}api-key`)).data.data.value).toBe('k-two');
    clock.advance(29_000);
    expect(await vaultStatus(v.read(`${t.read.path}api-key`))).toBe(200);
    clock.advance(1_000);
    expect(await vaultStatus(v.read(`${t.read.path}api-key`))).toBe(403);

    await d.api('POST', base(), { token: c.member.token, body: { name: 'doomed', value: 'doomed-value' } });
    const nt = (await d.api('POST', `${base()}/doomed:issue-token`, { token: c.member.token })).body;
    expect((await vault(nt.read.addr, nt.token).read(nt.read.path)).data.data.value).toBe('doomed-value');
    await d.api('DELETE', `${base()}/doomed`, { token: c.admin.token });
    await d.api('POST', base(), { token: c.member.token, body: { name: 'doomed', value: 'reborn' } });
    expect(await vaultStatus(vault(nt.read.addr, nt.token).read(nt.read.path))).toBe(403);
  });

  it('the sealed store answers the read path with Vault\'s 503 "Vault is sealed"', async () => {
    const t = (await d.api('POST', `${base()}:issue-token`, { token: c.member.token })).body;
    const { renameSync } = await import('node:fs');
    const file = `${d.home}/keys/secrets-master.key`;
    renameSync(file, file + '.away');
    try {
      const r = await fetch(`${t.read.addr}/v1/${t.read.path}api-key`, { headers: { 'X-Vault-Token': t.token } });
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ errors: ['Vault is sealed'] });
    } finally {
      renameSync(file + '.away', file);
    }
  });

  it('records every token in the audit log without the token itself', async () => {
    const t = (await d.api('POST', `${base()}/db-url:issue-token`, { token: c.member.token })).body;
    const r = await d.api('GET', `/v1/projects/${c.project.id}/audit?page_size=200`, { token: c.member.token });
    const rows = r.body.entries.filter((e: { action: string }) => e.action === 'project.secret.issue-token');
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(rows.some((e: { target: string; details: { scope: string } }) => e.target === 'db-url' && e.details.scope === 'secret')).toBe(true);
    expect(rows.some((e: { target: string; details: { scope: string } }) => e.target === '*' && e.details.scope === 'project')).toBe(true);
    expect(r.text).not.toContain(t.token);
  });
});

describe('workload keys (spec 2 §5)', () => {
  it('may mint a project token for their own project only: 404 on the name route, 403 elsewhere, 404 on other projects', async () => {
    const wl = createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'fn-reader');
    const ok = await d.api('POST', `${base()}:issue-token`, { token: wl, body: { ttl_seconds: 120 } });
    expect(ok.status).toBe(200);
    expect((await vault(ok.body.read.addr, ok.body.token).read(`${ok.body.read.path}api-key`)).data.data.value).toBe('k-two');
    const named = await d.api('POST', `${base()}/api-key:issue-token`, { token: wl, body: {} });
    expect(named.status).toBe(404);
    for (const [m, p, body] of [
      ['GET', base()],
      ['POST', base(), { name: 'wl-write', value: 'x' }],
      ['GET', `${base()}/api-key`],
      ['POST', `${base()}/api-key:reveal`, {}],
      ['GET', `/v1/projects/${c.project.id}/secret-maps`],
    ] as const) {
      expect((await d.api(m, p, { token: wl, body })).status, `${m} ${p}`).toBe(403);
    }
    const foreign = await d.api('POST', `/v1/projects/${other.project.id}/secrets:issue-token`, { token: wl, body: {} });
    expect(foreign.status).toBe(404);
  });
});
