import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESERVED_ENV_NAMES } from '../../src/api/secrets.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { deployFunction, ownWorkloadPorts, type Deployed } from './agent-fixture.js';

/**
 * Bindings (spec 2 §4.1) against a real deployed python function: the agents area writes bound
 * values into the agent's stored (sealed) secret environment, rolls a revision and recycles the
 * instance, so invoking the function shows what the workload really receives.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let worker: Deployed;
beforeAll(async () => {
  d = await startTestDaemon(ownWorkloadPorts());
  c = await cast(d);
  worker = await deployFunction(d, c.member.token, c.project.slug, 'worker');
  for (const [name, value] of [['stripe-key', 'sk-v1'], ['stripe-key', 'sk-v2'], ['db-url', 'db-v1']]) {
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name, value } });
  }
}, 90_000);
afterAll(() => d?.close());

const seq = (revision: string) => Number(revision.slice(-5));
const sealed = async (fn: () => Promise<void>) => {
  const file = join(d.home, 'keys', 'secrets-master.key');
  renameSync(file, file + '.away');
  try {
    await fn();
  } finally {
    renameSync(file + '.away', file);
  }
};

const maps = (agent: string, env = '') => `/v1/projects/${c.project.id}/agents/${agent}/secret-maps${env}`;
const bind = (agent: string, env: string, body: unknown, token = c.member.token) => d.api('PUT', maps(agent, `/${env}`), { token, body });

describe('PUT binding: the four ordered checks', () => {
  it('binds tracking newest or pinned, and returns the binding with pinned_to', async () => {
    const a = await bind('worker', 'STRIPE_KEY', { secret_name: 'stripe-key' });
    expect(a.status).toBe(200);
    expect(a.body.binding).toMatchObject({ agent: 'worker', agent_id: worker.id, env_name: 'STRIPE_KEY', secret_name: 'stripe-key', pinned_to: 'latest' });
    expect(a.body.binding.version).toBeUndefined();
    expect(typeof a.body.note).toBe('string');
    const b = await bind('worker', 'DB_URL', { secret_name: 'db-url', version: 1 });
    expect(b.body.binding).toMatchObject({ version: 1, pinned_to: '1' });
    const nulled = await bind('worker', 'STRIPE_KEY', { secret_name: 'stripe-key', version: null });
    expect(nulled.body.binding).toMatchObject({ pinned_to: 'latest', id: a.body.binding.id });
  });

  it('checks in order: env name, then secret exists, then version exists, then not destroyed', async () => {
    // Every check fails here; the first one reports.
    const r1 = await bind('worker', '1BAD', { secret_name: 'absent', version: 99 });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatch(/invalid environment variable name 1BAD/);
    const r2 = await bind('worker', 'GOOD', { secret_name: 'absent', version: 99 });
    expect(r2.body.error).toMatch(/secret absent does not exist/);
    const r3 = await bind('worker', 'GOOD', { secret_name: 'stripe-key', version: 99 });
    expect(r3.body.error).toMatch(/version 99 of secret stripe-key does not exist/);
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'phoenix', value: 'p1' } });
    await d.api('DELETE', `/v1/projects/${c.project.id}/secrets/phoenix`, { token: c.admin.token });
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'phoenix', value: 'p2' } });
    const r4 = await bind('worker', 'GOOD', { secret_name: 'phoenix', version: 1 });
    expect(r4.status).toBe(400);
    expect(r4.body.error).toMatch(/version 1 of secret phoenix was destroyed/);
    expect((await bind('worker', 'GOOD', { secret_name: 'cloud-account-credential' })).body.error).toMatch(/does not exist/);
    expect((await bind('worker', 'GOOD', { secret_name: 'phoenix', pinned: 2 })).body.error).toMatch(/unknown body field: pinned/);
    expect((await bind('ghost', 'GOOD', { secret_name: 'phoenix' })).status).toBe(404);
    const big = await d.api('PUT', maps('worker', '/GOOD'), { token: c.member.token, body: { secret_name: 'x'.repeat(9000) } });
    expect(big.status).toBe(413);
  });

  it('refuses each of the 19 reserved names', async () => {
    expect(RESERVED_ENV_NAMES).toHaveLength(19);
    for (const name of RESERVED_ENV_NAMES) {
      const r = await bind('worker', name, { secret_name: 'stripe-key' });
      expect(r.status, name).toBe(400);
      expect(r.body.error).toMatch(/reserved/);
    }
  });
});

describe('listing', () => {
  it('lists project bindings with paging and per agent; used_by shows on the secret', async () => {
    const all = await d.api('GET', `/v1/projects/${c.project.id}/secret-maps?page_size=1`, { token: c.member.token });
    expect(all.status).toBe(200);
    expect(all.body.bindings).toHaveLength(1);
    expect(all.body.next_page_token).toBeTruthy();
    const next = await d.api('GET', `/v1/projects/${c.project.id}/secret-maps?page_size=1&page_token=${all.body.next_page_token}`, { token: c.member.token });
    expect(next.body.bindings[0].env_name).not.toBe(all.body.bindings[0].env_name);
    const one = await d.api('GET', maps('worker'), { token: c.member.token });
    expect(one.body.agent).toBe('worker');
    expect(one.body.bindings.map((b: { env_name: string }) => b.env_name)).toEqual(['DB_URL', 'STRIPE_KEY']);
    expect((await d.api('GET', maps('ghost'), { token: c.member.token })).status).toBe(404);
    const s = await d.api('GET', `/v1/projects/${c.project.id}/secrets/db-url`, { token: c.member.token });
    expect(s.body.used_by).toEqual([
      { id: expect.any(String), agent_id: worker.id, agent_slug: 'worker', env_name: 'DB_URL', version: 1, created_at: expect.any(String), updated_at: expect.any(String) },
    ]);
    const tracking = await d.api('GET', `/v1/projects/${c.project.id}/secrets/stripe-key`, { token: c.member.token });
    expect('version' in tracking.body.used_by[0]).toBe(false);
  });

  it('delete of a bound secret is 409 naming the bindings', async () => {
    const r = await d.api('DELETE', `/v1/projects/${c.project.id}/secrets/db-url`, { token: c.admin.token });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/worker\/DB_URL/);
    expect(r.body.bindings).toEqual([{ agent: 'worker', env_name: 'DB_URL' }]);
  });
});

describe(':apply', () => {
  it('writes every bound value into the deployed function and rolls a revision; tracking moves only on the next apply', async () => {
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: null, DB_URL: null });
    const rev = seq(await worker.revision());
    const t0 = performance.now();
    const r = await d.api('POST', maps('worker', ':apply'), { token: c.member.token });
    expect(r.status, r.text).toBe(200);
    const applied = performance.now() - t0;
    expect(r.body).toMatchObject({ agent: 'worker', revision_rolled: true });
    expect(r.body.applied).toEqual([
      { env_name: 'DB_URL', secret_name: 'db-url', version: 1, applied: true },
      { env_name: 'STRIPE_KEY', secret_name: 'stripe-key', version: 2, applied: true },
    ]);
    expect(r.text).not.toMatch(/sk-v2|db-v1/);
    expect(seq(await worker.revision())).toBe(rev + 1);
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: 'sk-v2', DB_URL: 'db-v1' });
    console.log(`apply (2 bindings, revision rolled): ${applied.toFixed(0)} ms; apply then first invoke with the values (cold start): ${(performance.now() - t0).toFixed(0)} ms`);
    // The agents area lists the bound names among the agent's secret keys (values never).
    const keys = await d.api('GET', `/v1/agents/worker/secrets?project=${c.project.slug}`, { token: c.member.token });
    expect(keys.body.keys).toEqual(['DB_URL', 'STRIPE_KEY']);

    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'stripe-key', value: 'sk-v3' } });
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'db-url', value: 'db-v2' } });
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: 'sk-v2', DB_URL: 'db-v1' });
    expect((await d.api('POST', maps('worker', ':apply'), { token: c.member.token })).status).toBe(200);
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: 'sk-v3', DB_URL: 'db-v1' });
  });

  it('a deploy takes the newest version of tracking bindings without an apply; pinned ones stay', async () => {
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'stripe-key', value: 'sk-v4' } });
    expect((await worker.env('STRIPE_KEY')).STRIPE_KEY).toBe('sk-v3');
    const a = await worker.redeploy();
    expect(a.state, JSON.stringify(a)).toBe('ready');
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: 'sk-v4', DB_URL: 'db-v1' });
  });

  it('is all or nothing: one unreadable value gives 424 with per-row results and writes nothing', async () => {
    const rev = await worker.revision();
    const stored = d.db.prepare(`SELECT key, value FROM agents_secrets WHERE agent_id = ? ORDER BY key`).all(worker.id);
    // Corrupt the stored ciphertext of the pinned version: GCM authentication then fails.
    d.db.prepare(`UPDATE sec_versions SET ciphertext = zeroblob(40) WHERE project_id = ? AND name = 'db-url' AND version = 1`).run(c.project.id);
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'stripe-key', value: 'sk-v5' } });
    const r = await d.api('POST', maps('worker', ':apply'), { token: c.member.token });
    expect(r.status).toBe(424);
    expect(r.body.error).toMatch(/nothing was written/);
    expect(r.body).toMatchObject({ agent: 'worker', revision_rolled: false });
    expect(r.body.applied).toEqual([
      { env_name: 'DB_URL', secret_name: 'db-url', version: 1, applied: false, error: expect.stringMatching(/integrity/) },
      { env_name: 'STRIPE_KEY', secret_name: 'stripe-key', version: 5, applied: false },
    ]);
    expect(r.text).not.toContain('sk-v5');
    expect(d.db.prepare(`SELECT key, value FROM agents_secrets WHERE agent_id = ? ORDER BY key`).all(worker.id)).toEqual(stored);
    expect(await worker.revision()).toBe(rev);
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: 'sk-v4', DB_URL: 'db-v1' });
    // A deploy refuses the same way: the revision would start with a stale secret. It is listed
    // as failed while the previous revision keeps serving, so the worker reads ready.
    const failed = await worker.redeploy();
    expect(failed.state).toBe('ready');
    expect(failed.serving_revision).not.toBe(failed.latest_revision);
    expect(failed.message).toMatch(/bound project secrets could not be read.*DB_URL/);
    // Repointing the broken binding at a good version heals it.
    await bind('worker', 'DB_URL', { secret_name: 'db-url', version: 2 });
    expect((await d.api('POST', maps('worker', ':apply'), { token: c.member.token })).status).toBe(200);
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: 'sk-v5', DB_URL: 'db-v2' });
    expect((await worker.redeploy()).state).toBe('ready');
  });

  it('unknown agent 404; sealed store 503', async () => {
    expect((await d.api('POST', maps('ghost', ':apply'), { token: c.member.token })).status).toBe(404);
    await sealed(async () => {
      expect((await d.api('POST', maps('worker', ':apply'), { token: c.member.token })).status).toBe(503);
    });
  });
});

describe('DELETE binding: immediate revocation', () => {
  it('removes the row and the key from the deployed function, rolls a revision, and works while the store is sealed', async () => {
    const rev = seq(await worker.revision());
    await sealed(async () => {
      expect((await d.api('GET', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token })).status).toBe(503);
      const r = await d.api('DELETE', maps('worker', '/STRIPE_KEY'), { token: c.member.token });
      expect(r.status, r.text).toBe(200);
      expect(r.body).toMatchObject({ agent: 'worker', env_name: 'STRIPE_KEY', deleted: true, revoked: true, revision_rolled: true });
    });
    expect(seq(await worker.revision())).toBe(rev + 1);
    expect(await worker.env('STRIPE_KEY', 'DB_URL')).toEqual({ STRIPE_KEY: null, DB_URL: 'db-v2' });
    expect((await d.api('GET', maps('worker'), { token: c.member.token })).body.bindings.map((b: { env_name: string }) => b.env_name)).toEqual(['DB_URL']);
    expect((await d.api('DELETE', maps('worker', '/STRIPE_KEY'), { token: c.member.token })).status).toBe(404);
  });

  it('once unbound the secret can be deleted; service-account members can bind; audit rows are written', async () => {
    expect((await d.api('DELETE', maps('worker', '/DB_URL'), { token: c.sa.token })).status).toBe(200);
    expect((await d.api('DELETE', `/v1/projects/${c.project.id}/secrets/db-url`, { token: c.admin.token })).status).toBe(200);
    expect(await worker.env('DB_URL')).toEqual({ DB_URL: null });
    const r = await d.api('GET', `/v1/projects/${c.project.id}/audit?page_size=200`, { token: c.member.token });
    const actions = r.body.entries.map((e: { action: string }) => e.action);
    for (const a of ['project.secret.bind', 'project.secret.unbind', 'project.secret.apply']) expect(actions).toContain(a);
    const apply = r.body.entries.find((e: { action: string }) => e.action === 'project.secret.apply');
    expect(apply).toMatchObject({ target: 'worker', details: { revision_rolled: true } });
    expect(r.text).not.toMatch(/sk-v\d|db-v\d/);
  });

  it('bindings of a deleted agent stay listed, reach a new agent of that name at its first deploy, and unbind without a revision', async () => {
    await bind('worker', 'LATE', { secret_name: 'stripe-key' });
    const del = () => d.api('DELETE', `/v1/agents/worker?project=${c.project.slug}`, { token: c.member.token });
    expect((await del()).status).toBe(200);
    expect((await d.api('GET', maps('worker'), { token: c.member.token })).body.bindings).toHaveLength(1);
    const reborn = await deployFunction(d, c.member.token, c.project.slug, 'worker');
    expect(reborn.id).not.toBe(worker.id);
    expect(await reborn.env('LATE', 'STRIPE_KEY')).toEqual({ LATE: 'sk-v5', STRIPE_KEY: null });
    expect((await del()).status).toBe(200);
    const r = await d.api('DELETE', maps('worker', '/LATE'), { token: c.member.token });
    expect(r.body).toMatchObject({ deleted: true, revoked: true, revision_rolled: false });
    expect(r.body.note).toMatch(/no longer exists/);
  });
});

describe('roles', () => {
  it('outsiders get 404 on every binding route; members may bind (no admin needed)', async () => {
    for (const [m, p] of [
      ['GET', `/v1/projects/${c.project.id}/secret-maps`],
      ['GET', maps('worker')],
      ['PUT', maps('worker', '/X')],
      ['DELETE', maps('worker', '/X')],
      ['POST', maps('worker', ':apply')],
    ] as const) {
      const r = await d.api(m, p, { token: c.outsider.token, body: m === 'PUT' ? { secret_name: 'stripe-key' } : undefined });
      expect(r.status, `${m} ${p}`).toBe(404);
    }
    expect((await d.api('GET', `/v1/projects/${c.project.id}/secret-maps`)).status).toBe(401);
  });
});
