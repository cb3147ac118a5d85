import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/** Issue 17 §3 in the CLI: `login --api-key-stdin`, the warning for a key in argv, `audit --platform`. */
let cli: ReturnType<typeof cliSandbox>;
let key: string;
beforeAll(async () => {
  cli = cliSandbox();
  const made = await cli.run(['keys', 'create', 'cli-hardening']);
  expect(made.exitCode, made.stderr).toBe(0);
  key = made.stdout.trim();
  expect(key).toMatch(/^svc_/);
});
afterAll(() => cli?.stop(), 60_000);

describe('platform login with an API key', () => {
  it('--api-key-stdin reads the key from standard input, without a warning', async () => {
    const r = await cli.run(['login', '--api-key-stdin', '--json'], { input: `${key}\n` });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ email: 'admin@example.test', credential: 'api_key' });
    expect(r.stderr).not.toMatch(/warning/);
  });

  it('--api-key on the command line still works but warns that other users can read it', async () => {
    const r = await cli.run(['login', '--api-key', key, '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: a key on the command line can be read by other local users/);
    expect(r.stderr).toMatch(/--api-key-stdin/);
  });

  it('help shows the stdin form', async () => {
    const r = await cli.run(['login', '--help']);
    expect(r.stdout).toMatch(/--api-key-stdin/);
    expect(r.stdout).toMatch(/login --api-key-stdin/);
  });
});

describe('platform audit --platform', () => {
  it('lists failed sign-ins, filtered by action, as a table and as JSON', async () => {
    const failed = await cli.run(['login', '--email', 'intruder@example.test', '--password-stdin'], { input: 'Guessing-Password-1\n' });
    expect(failed.exitCode).toBe(1);
    // The failed login did not replace the stored key.
    const r = await cli.run(['audit', '--platform', '--action', 'auth.login_failed', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.entries).toContainEqual(expect.objectContaining({ action: 'auth.login_failed', target: 'intruder@example.test' }));
    expect(r.stdout).not.toContain('Guessing-Password-1');
    const table = await cli.run(['audit', '--platform', '--action', 'auth']);
    expect(table.stdout).toMatch(/auth\.login_failed\s+intruder@example\.test/);
    const keys = await cli.run(['audit', '--platform', '--action', 'key', '--json']);
    expect(keys.json.entries).toContainEqual(expect.objectContaining({ action: 'key.create', actor: 'admin@example.test' }));
  }, 120_000); // four CLI runs of about 3 s each on a busy two-core machine

  it('help shows the --platform examples', async () => {
    const r = await cli.run(['audit', '--help']);
    expect(r.stdout).toMatch(/--platform/);
    expect(r.stdout).toMatch(/audit --platform --action auth\.login_failed/);
  });
});
