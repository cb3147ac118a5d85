import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { deployFunction, ownWorkloadPorts, type Deployed } from './agent-fixture.js';

/**
 * Encryption at rest across both stores that hold secret values: project secrets (sec_versions)
 * and an agent's own secret environment (agents_secrets, where bindings also land). The database
 * files, WAL included, must never hold a value's bytes, in any encoding a careless write would use.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let fn: Deployed;
beforeAll(async () => {
  d = await startTestDaemon(ownWorkloadPorts());
  c = await cast(d);
  fn = await deployFunction(d, c.member.token, c.project.slug, 'keeper');
}, 90_000);
afterAll(() => d?.close());

/** Database files (WAL included) holding the marker as UTF-8, UTF-16 or hex text. */
function dbFilesContain(marker: string): string[] {
  const forms = { utf8: Buffer.from(marker), utf16: Buffer.from(marker, 'utf16le'), hex: Buffer.from(Buffer.from(marker).toString('hex')) };
  const hits: string[] = [];
  for (const f of ['platform.db', 'platform.db-wal', 'platform.db-shm'].map((n) => join(d.home, n)).filter(existsSync)) {
    const bytes = readFileSync(f);
    for (const [enc, form] of Object.entries(forms)) if (bytes.includes(form)) hits.push(`${f} (${enc})`);
  }
  return hits;
}

describe('encryption at rest', () => {
  it('neither project secrets nor agent secrets (set directly or through a binding) reach the database file in the clear', async () => {
    const direct = `AGENT-DIRECT-${Date.now()}-qx`;
    const bound = `PROJECT-BOUND-${Date.now()}-qx`;
    const q = `?project=${c.project.slug}`;
    const patch = await d.api('PATCH', `/v1/agents/keeper/secrets${q}`, { token: c.member.token, body: { set: { DIRECT_TOKEN: direct } } });
    expect(patch.status, patch.text).toBe(200);
    expect((await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'bound', value: bound } })).status).toBe(201);
    expect((await d.api('PUT', `/v1/projects/${c.project.id}/agents/keeper/secret-maps/BOUND_TOKEN`, { token: c.member.token, body: { secret_name: 'bound' } })).status).toBe(200);
    expect((await d.api('POST', `/v1/projects/${c.project.id}/agents/keeper/secret-maps:apply`, { token: c.member.token })).status).toBe(200);
    // The workload receives both values...
    expect(await fn.env('DIRECT_TOKEN', 'BOUND_TOKEN')).toEqual({ DIRECT_TOKEN: direct, BOUND_TOKEN: bound });
    // ...while the database holds only ciphertext, before and after the WAL is folded in.
    expect(dbFilesContain(direct)).toEqual([]);
    expect(dbFilesContain(bound)).toEqual([]);
    d.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(dbFilesContain(direct)).toEqual([]);
    expect(dbFilesContain(bound)).toEqual([]);
    const rows = d.db.prepare('SELECT key, value FROM agents_secrets WHERE agent_id = ? ORDER BY key').all(fn.id) as { key: string; value: string }[];
    expect(rows.map((r) => r.key)).toEqual(['BOUND_TOKEN', 'DIRECT_TOKEN']);
    for (const r of rows) expect(r.value).toMatch(/^gcm1:[A-Za-z0-9+/]+=*$/);
  });

  it('a sealed value moved onto another key fails its integrity check instead of leaking', async () => {
    const rows = d.db.prepare('SELECT key, value FROM agents_secrets WHERE agent_id = ? ORDER BY key').all(fn.id) as { key: string; value: string }[];
    d.db.prepare('UPDATE agents_secrets SET value = ? WHERE agent_id = ? AND key = ?').run(rows[0]!.value, fn.id, 'DIRECT_TOKEN');
    const r = await d.api('PATCH', `/v1/agents/keeper/secrets?project=${c.project.slug}`, { token: c.member.token, body: { set: { OTHER: 'x' } } });
    expect(r.status).toBe(500);
    expect(r.body.error).toMatch(/integrity check/);
    d.db.prepare('UPDATE agents_secrets SET value = ? WHERE agent_id = ? AND key = ?').run(rows[1]!.value, fn.id, 'DIRECT_TOKEN');
  });

  it('while the store is sealed, agent secret writes answer 503 and key listings still work', async () => {
    const file = join(d.home, 'keys', 'secrets-master.key');
    renameSync(file, file + '.away');
    try {
      const q = `?project=${c.project.slug}`;
      const w = await d.api('PATCH', `/v1/agents/keeper/secrets${q}`, { token: c.member.token, body: { set: { LATER: 'x' } } });
      expect(w.status).toBe(503);
      expect(w.body.error).toMatch(/sealed/);
      const keys = await d.api('GET', `/v1/agents/keeper/secrets${q}`, { token: c.member.token });
      expect(keys.status).toBe(200);
      expect(keys.body.keys).toEqual(['BOUND_TOKEN', 'DIRECT_TOKEN']);
      // An env change rolls a revision and recycles the instance; the cold start cannot open the
      // agent's secrets, so the workload does not start (fail-closed) rather than start without them.
      expect((await d.api('PATCH', `/v1/agents/keeper/env${q}`, { token: c.member.token, body: { set: { MODE: 'sealed' } } })).status).toBe(200);
      const inv = await d.api('POST', `/v1/agents/keeper/invoke${q}`, { token: c.member.token, body: { message: 'env:DIRECT_TOKEN' } });
      expect(inv.status).toBe(503);
      expect(inv.text).toMatch(/sealed/);
      expect(inv.text).not.toMatch(/AGENT-DIRECT/);
    } finally {
      renameSync(file + '.away', file);
    }
    expect((await fn.env('DIRECT_TOKEN')).DIRECT_TOKEN).toMatch(/^AGENT-DIRECT-/);
  });
});

describe('across a daemon restart', () => {
  it('sealed agent secrets and bindings survive: the restarted daemon serves the bound value from the same key file', async () => {
    const home = mkdtempSync(join(tmpdir(), 'platform-secrets-restart-'));
    const ports = ownWorkloadPorts();
    try {
      const first = await startTestDaemon(ports, { home });
      try {
        const token = await first.adminToken();
        await first.api('POST', '/v1/projects/default/secrets', { token, body: { name: 'api-key', value: 'survives-restart' } });
        await deployFunction(first, token, 'default', 'persist');
        expect((await first.api('PUT', '/v1/projects/default/agents/persist/secret-maps/API_KEY', { token, body: { secret_name: 'api-key' } })).status).toBe(200);
        expect((await first.api('POST', '/v1/projects/default/agents/persist/secret-maps:apply', { token })).status).toBe(200);
      } finally {
        await first.close();
      }
      const second = await startTestDaemon(ports, { home });
      try {
        const t2 = await second.adminToken();
        const r = await second.api('POST', '/v1/agents/persist/invoke?project=default', { token: t2, body: { message: 'env:API_KEY' } });
        expect(r.status, r.text).toBe(200);
        expect(r.body.env).toEqual({ API_KEY: 'survives-restart' });
      } finally {
        await second.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
