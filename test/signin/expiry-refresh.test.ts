import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { PROCESS_ADMIN, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';

/**
 * Lifetimes, shortened by the daemon's settings: a device code nobody approves expires and the
 * CLI says so; a session token that expired is refreshed by the CLI (before a command, and on a
 * 401 it did not expect) and the refresh token is single use.
 */
let work: string;
let daemon: DaemonProcess;
let cli: ReturnType<typeof cliSandbox>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'platform-signin-expiry-'));
  daemon = await spawnDaemonProcess(join(work, 'server-home'), {
    PLATFORM_DEVICE_CODE_TTL_SECONDS: '2',
    PLATFORM_DEVICE_POLL_INTERVAL_SECONDS: '1',
    PLATFORM_SESSION_TTL_SECONDS: '3',
  });
  cli = cliSandbox();
  expect((await cli.run(['context', 'add', 'srv', daemon.url, '--use'])).exitCode).toBe(0);
}, 60_000);

afterAll(async () => {
  daemon?.child.kill('SIGTERM');
  await daemon?.exited;
  await cli?.stop();
  rmSync(work, { recursive: true, force: true });
});

const credentialsFile = () => join(cli.home, 'credentials.json');
const stored = () => JSON.parse(readFileSync(credentialsFile(), 'utf8')).srv as { token: string; refreshToken: string; expiresAt: number };
const status = async (token: string) => (await fetch(`${daemon.url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status;
/** The daemon is the clock: wait until it refuses the token (expired), not a fixed sleep. */
const expired = (token: string) => expect.poll(() => status(token), { timeout: 10_000, interval: 250 }).toBe(401);

describe('lifetimes', () => {
  it('a code nobody approves expires, and the CLI says so', async () => {
    const r = await cli.run(['login', '--web', '--no-browser', '--json']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/one-time code: [A-Z]{4}-[A-Z]{4}/);
    expect(r.json).toMatchObject({ error: expect.stringMatching(/^the code [A-Z]{4}-[A-Z]{4} expired before it was approved$/), next: expect.stringMatching(/login --web/) });
  });

  it('an expired session is refreshed: on a 401 the CLI did not expect, and before a command', async () => {
    const login = await cli.run(['login', '--email', PROCESS_ADMIN.email, '--password-stdin', '--json'], { input: PROCESS_ADMIN.password });
    expect(login.exitCode, login.stderr).toBe(0);
    const first = stored();
    expect(first.refreshToken).toMatch(/^rt_/);
    await expired(first.token);

    // The CLI believes the token fresh (a clock off by hours would do the same): the server's 401 makes it refresh once.
    writeFileSync(credentialsFile(), JSON.stringify({ srv: { ...first, expiresAt: Math.floor(Date.now() / 1000) + 3600 } }));
    const afterUnexpected = await cli.run(['whoami', '--json']);
    expect(afterUnexpected.exitCode, afterUnexpected.stderr).toBe(0);
    expect(afterUnexpected.json.email).toBe(PROCESS_ADMIN.email);
    const second = stored();
    expect(second.token).not.toBe(first.token);
    expect(second.refreshToken).not.toBe(first.refreshToken);

    // A rotated-out refresh token no longer works.
    const reused = await fetch(`${daemon.url}/v1/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: first.refreshToken }) });
    expect(reused.status).toBe(401);

    // Known to be expired: refreshed before the command's first request.
    await expired(second.token);
    const afterExpiry = await cli.run(['projects', 'list', '--json']);
    expect(afterExpiry.exitCode, afterExpiry.stderr).toBe(0);
    expect(stored().token).not.toBe(second.token);
  });
});
