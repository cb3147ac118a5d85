import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { deployFunction, ownWorkloadPorts, type Deployed } from './agent-fixture.js';

/**
 * The runtime read path end to end (spec 2 §4.1 "Runtime read"): a function deployed through the
 * daemon calls the shipped helper (python get_secret, nodejs getSecret) at invoke time; the
 * helper mints a project token with the workload key the platform injected and reads the value
 * from the store's Vault KV v2 path. Nothing is bound: the value never enters the environment.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
const fns: Partial<Record<'python' | 'nodejs', Deployed>> = {};
beforeAll(async () => {
  d = await startTestDaemon(ownWorkloadPorts());
  c = await cast(d);
  await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'smtp-password', value: 'first' } });
  fns.python = await deployFunction(d, c.member.token, c.project.slug, 'mailer-py', 'python');
  fns.nodejs = await deployFunction(d, c.member.token, c.project.slug, 'mailer-js', 'nodejs');
}, 120_000);
afterAll(() => d?.close());

describe.each(['python', 'nodejs'] as const)('a deployed %s function', (rt) => {
  it('reads the newest value at call time through the helper, with no apply or redeploy', async () => {
    const fn = fns[rt]!;
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'smtp-password', value: `before ${rt}` } });
    expect(await fn.invoke('secret:smtp-password')).toMatchObject({ value: `before ${rt}` });
    const rotated = `p@ss wörd/€ ${rt}`;
    await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'smtp-password', value: rotated } });
    const rev = await fn.revision();
    const t0 = performance.now();
    expect(await fn.invoke('secret:smtp-password')).toMatchObject({ value: rotated });
    console.log(`${rt}: invoke reading one secret through the helper (cached token): ${(performance.now() - t0).toFixed(1)} ms`);
    expect(await fn.revision()).toBe(rev);
    // The value is read, not injected.
    expect(await fn.env('smtp-password', 'SMTP_PASSWORD')).toEqual({ 'smtp-password': null, SMTP_PASSWORD: null });
    // The token was minted by this workload's key, project-scoped, with the workload's lifetime.
    const audit = d.db
      .prepare(`SELECT actor, details FROM acct_audit WHERE action = 'project.secret.issue-token' AND actor LIKE ? ORDER BY seq DESC LIMIT 1`)
      .get(`%${rt === 'python' ? 'mailer-py' : 'mailer-js'}%`) as { actor: string; details: string } | undefined;
    expect(audit, 'issue-token audit row of the workload').toBeDefined();
    expect(JSON.parse(audit!.details)).toMatchObject({ scope: 'project' });
  });

  it('reports an absent secret as an error naming it, never an empty value', async () => {
    const r = await fns[rt]!.invoke('secret:nope');
    expect(r.value).toBeUndefined();
    expect(r.error).toMatch(/secret nope not found/);
  });

  it('stops reading once the store is sealed (503 from the store, no stale value)', async () => {
    const file = join(d.home, 'keys', 'secrets-master.key');
    renameSync(file, file + '.away');
    try {
      const r = await fns[rt]!.invoke('secret:smtp-password');
      expect(r.value).toBeUndefined();
      expect(r.error).toMatch(/503|sealed/);
    } finally {
      renameSync(file + '.away', file);
    }
  });
});
