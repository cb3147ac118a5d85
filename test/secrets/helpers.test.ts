import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkloadKey } from '../../src/daemon/services/auth/keys.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';

/**
 * The workload helpers run as real processes with the environment a deployed workload gets
 * (SVC_API_URL, SVC_PROJECT_ID, SVC_PROJECT_KEY, PLATFORM_REQUEST_TIMEOUT_SECONDS).
 */
const HELPERS = join(import.meta.dirname, '..', '..', 'src', 'daemon', 'runtimes', 'helpers');
const runners = {
  python: (args: string[]) => ['python3', [join(HELPERS, 'platform_secrets.py'), ...args]] as const,
  nodejs: (args: string[]) => ['node', [join(HELPERS, 'platform_secrets.cjs'), ...args]] as const,
};

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let env: Record<string, string>;
beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
  await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'smtp-password', value: 'v1' } });
  await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'smtp-password', value: 'p@ss wörd/€' } });
  env = {
    SVC_API_URL: d.url,
    SVC_PROJECT_ID: c.project.id,
    SVC_PROJECT_KEY: createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'mailer'),
    PLATFORM_REQUEST_TIMEOUT_SECONDS: '120',
  };
});
afterAll(() => d.close());

const run = (rt: keyof typeof runners, args: string[], e: Record<string, string>) => {
  const [cmd, argv] = runners[rt](args);
  return execa(cmd, [...argv], { env: e, extendEnv: false, reject: false, timeout: 20_000 });
};

describe.each(['python', 'nodejs'] as const)('%s helper', (rt) => {
  it('reads the newest value with the workload key', async () => {
    const r = await run(rt, ['smtp-password'], env);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('p@ss wörd/€');
    // The token it minted was requested with the workload's lifetime.
    const audit = d.db.prepare(`SELECT details FROM acct_audit WHERE action = 'project.secret.issue-token' AND actor LIKE '%mailer%' ORDER BY ts DESC LIMIT 1`).get() as { details: string } | undefined;
    expect(JSON.parse(audit!.details)).toMatchObject({ scope: 'project', ttl_seconds: 120 });
  });

  it('fails loudly when a variable is missing, naming it', async () => {
    for (const drop of ['SVC_API_URL', 'SVC_PROJECT_ID', 'SVC_PROJECT_KEY']) {
      const partial = { ...env, PATH: process.env.PATH! };
      delete (partial as Record<string, string>)[drop];
      const r = await run(rt, ['smtp-password'], partial);
      expect(r.exitCode, drop).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(drop);
    }
  });

  it('reports an absent secret and a bad key without printing anything', async () => {
    const absent = await run(rt, ['nope'], { ...env, PATH: process.env.PATH! });
    expect(absent.exitCode).not.toBe(0);
    expect(absent.stderr).toMatch(/secret nope not found/);
    const bad = await run(rt, ['smtp-password'], { ...env, PATH: process.env.PATH!, SVC_PROJECT_KEY: 'svc_wl_aaaaaaaaaaaa_' + 'b'.repeat(40) });
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/401/);
    expect(bad.stdout).toBe('');
  });
});
