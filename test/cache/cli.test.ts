import { readdirSync, readFileSync, statSync } from 'node:fs';
import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { haveRedis, haveRedisCli, waitFor } from './helpers.js';

const safeRead = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** `platform cache ...` through the built CLI against the daemon it spawns. */
describe.skipIf(!haveRedis || !haveRedisCli)('platform cache (CLI)', () => {
  const sb = cliSandbox({ PLATFORM_CACHE_STOP_ON_EXIT: '1', PLATFORM_CACHE_HEALTH_INTERVAL_MS: '100' });
  afterAll(() => sb.stop());
  let password: string;

  beforeAll(async () => {
    const r = await sb.run(['cache', 'create', 'cli-cache', '--policy', 'allkeys-lru', '--wait', '--json']);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    password = r.json.credential.password;
  }, 60_000);

  it('create --wait returns the ready instance and the password once', async () => {
    const r = await sb.run(['cache', 'get', 'cli-cache']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/state\s+ready/);
    expect(r.stdout).toMatch(/maxmemory\s+192Mi/);
    expect(r.stdout).toMatch(/credential_secret\s+ms-cli-cache-credential/);
    expect(r.stdout).not.toContain(password);
    // The CLI keeps the password for `connect` in a private file.
    expect(statSync(join(sb.home, 'cache-credentials.json')).mode & 0o777).toBe(0o600);
  });

  it('list and stats print readable output and JSON', async () => {
    const list = await sb.run(['cache', 'list']);
    expect(list.exitCode).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+STATE\s+READY\s+SIZE\s+POLICY/);
    expect(list.stdout).toMatch(/cli-cache\s+ready\s+yes\s+small\s+allkeys-lru\s+2Gi\s+127\.0\.0\.1:\d+/);
    const stats = await sb.run(['cache', 'stats', 'cli-cache', '--json']);
    expect(stats.exitCode).toBe(0);
    expect(stats.json).toMatchObject({ name: 'cli-cache', maxmemory_policy: 'allkeys-lru', db_keys: 0 });
  });

  it('connect runs redis-cli with the saved password, never on its command line', async () => {
    const set = await sb.run(['cache', 'connect', 'cli-cache', '--', 'SET', 'via-cli', 'yes']);
    expect(set.exitCode, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe('OK');
    // Commands piped on stdin work too (an interactive session reads the same way).
    const piped = await sb.run(['cache', 'connect', 'cli-cache'], { input: 'GET via-cli\nDBSIZE\n' });
    expect(piped.stdout.trim().split('\n')).toEqual(['yes', '1']);
    // While a session is open, no process on the machine shows the password in its command line;
    // redis-cli has it in its (owner-only) environment instead.
    const session = execa('node', [join(import.meta.dirname, '..', '..', 'bin', 'run.js'), 'cache', 'connect', 'cli-cache'], {
      env: { PLATFORM_HOME: sb.home, PLATFORM_NO_KEYCHAIN: '1', PLATFORM_PORT: '0' },
      extendEnv: true,
      stdin: 'pipe',
      reject: false,
    });
    const cliPid = await waitFor('redis-cli to start', async () =>
      readdirSync('/proc').find((p) => /^\d+$/.test(p) && safeRead(`/proc/${p}/cmdline`).startsWith('redis-cli\0')),
    );
    for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) expect(safeRead(`/proc/${p}/cmdline`)).not.toContain(password);
    expect(safeRead(`/proc/${cliPid}/environ`)).toContain(`REDISCLI_AUTH=${password}`);
    session.stdin!.end('PING\n');
    expect((await session).stdout.trim()).toBe('PONG');
  });

  it('rotate prints the new password and connect follows it; delete needs --yes without a TTY', async () => {
    const rot = await sb.run(['cache', 'rotate', 'cli-cache', '--json']);
    expect(rot.exitCode).toBe(0);
    expect(rot.json.credential.password).not.toBe(password);
    // Wait for the restart that applies it (a direct PING, cheaper than a CLI run per try), then
    // connect uses the new one.
    const { authedCommand } = await import('../../src/daemon/services/cache/resp.js');
    const port = Number(new URL(rot.json.credential.uri).port);
    await waitFor('the rotated password', async () =>
      (await authedCommand(port, rot.json.credential.password, ['PING'], 1000).catch(() => undefined)) === 'PONG' ? true : undefined,
    );
    const out = (await sb.run(['cache', 'connect', 'cli-cache', '--', 'GET', 'via-cli'])).stdout.trim();
    expect(out).toBe('yes');
    const noYes = await sb.run(['cache', 'delete', 'cli-cache']);
    expect(noYes.exitCode).toBe(2);
    expect(noYes.stderr).toMatch(/--yes/);
    const del = await sb.run(['cache', 'delete', 'cli-cache', '--yes', '--json']);
    expect(del.exitCode).toBe(0);
    expect(del.json).toMatchObject({ name: 'cli-cache', state: 'deleting', ready: false });
    const gone = await sb.run(['cache', 'connect', 'cli-cache', '--', 'PING']);
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toMatch(/cache cli-cache not found|no password known/);
  }, 30_000);

  it('connect --tls reaches an exposed instance through its TLS port, trusting the local CA', async () => {
    const made = await sb.run(['cache', 'create', 'cli-public', '--external', '--no-persistence', '--wait', '--json']);
    expect(made.exitCode, made.stderr).toBe(0);
    expect(made.json.cache).toMatchObject({ external_exposure: true, externally_reachable: true, external_endpoint: expect.stringMatching(/^rediss:\/\/127\.0\.0\.1:\d+$/) });
    const ping = await sb.run(['cache', 'connect', 'cli-public', '--tls', '--', 'PING']);
    expect(ping.exitCode, ping.stderr).toBe(0);
    expect(ping.stdout.trim()).toBe('PONG');
  }, 30_000);

  it('errors come back with the API message and a non-zero exit', async () => {
    const bad = await sb.run(['cache', 'create', 'Bad_Name', '--json']);
    expect(bad.exitCode).toBe(1);
    expect(bad.json).toMatchObject({ status: 400, error: expect.stringMatching(/name must be 1 to 40 characters/) });
  });
});
