import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startedSandbox } from './small-things-helpers.js';

/**
 * Issue 25 §3, "small things users trip on" (signing in and out, addresses), through the built
 * CLI against the daemon it starts. The tests run in order: auth token signs in a member, logout
 * signs out, open runs as the admin signed in again.
 */
const sandbox = startedSandbox();
const { cli, api } = sandbox;
const SLOW = 120_000;
afterAll(() => cli.stop(), 60_000);
beforeAll(() => sandbox.start(), SLOW);

describe('auth token', () => {
  const me = async (token: string) => {
    const res = await fetch(`${sandbox.url()}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as { email: string } };
  };

  it('prints only the token, which works against the daemon as the same user; --json adds expires_at', async () => {
    const [plain, json] = await Promise.all([cli.run(['auth', 'token']), cli.run(['auth', 'token', '--json'])]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^svc_[a-z0-9]{12}_[A-Za-z0-9]{40}$/);
    expect(await me(plain.stdout)).toMatchObject({ status: 200, body: { email: 'admin@example.test' } });
    expect(json.json).toEqual({ token: plain.stdout, expires_at: null });

    // A member signed in with a password gets their session's token.
    const created = await api('POST', '/v1/users', { email: 'member@example.test', password: 'Member-Password-123' });
    expect(created.status).toBe(201);
    const login = await cli.run(['login', '--email', 'member@example.test', '--password-stdin'], { input: 'Member-Password-123' });
    expect(login.exitCode, login.stderr).toBe(0);
    const session = await cli.run(['auth', 'token', '--json']);
    expect(session.exitCode, session.stderr).toBe(0);
    expect(session.json.token).not.toMatch(/^svc_/);
    expect(Date.parse(session.json.expires_at)).toBeGreaterThan(Date.now() + 5 * 60_000);
    expect(await me(session.json.token)).toMatchObject({ status: 200, body: { email: 'member@example.test' } });
  }, SLOW);
});

describe('logout on the local context', () => {
  it('forgets the credential for good: the next command does not sign in as the admin by itself (PLATFORM_ADMIN_PASSWORD is set)', async () => {
    const credentials = join(cli.home, 'credentials.json');
    const contexts = () => JSON.parse(readFileSync(join(cli.home, 'contexts.json'), 'utf8')).contexts.find((c: { name: string }) => c.name === 'local');
    const session = JSON.parse(readFileSync(credentials, 'utf8')).local.token as string;
    const out = await cli.run(['logout']);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(out.stdout).toBe('signed out of local (the session was ended on the server)');
    expect(out.stderr).toContain('sign in again with `platform login`');
    expect(contexts().signed_out).toBe(true);
    const [who, keys] = await Promise.all([cli.run(['whoami', '--json']), cli.run(['keys', 'list'])]);
    expect(who.exitCode).toBe(1);
    expect(who.json).toMatchObject({ status: 401, next: expect.stringContaining('platform login') });
    expect(keys.exitCode).toBe(1);
    expect(keys.stderr).toContain('sign in with `platform login`');
    // What a person reads names no HTTP route (the API's own text does, for HTTP clients).
    expect(keys.stderr).toContain('Error: not signed in, or the sign-in has ended');
    expect(keys.stderr).not.toMatch(/\/v1\//);
    expect(existsSync(credentials) ? JSON.parse(readFileSync(credentials, 'utf8')).local : undefined).toBeUndefined();
    expect((await fetch(`${sandbox.url()}/v1/auth/me`, { headers: { authorization: `Bearer ${session}` } })).status).toBe(401);

    const login = await cli.run(['login', '--email', 'admin@example.test', '--password-stdin'], { input: 'Admin-Password-123' });
    expect(login.exitCode, login.stderr).toBe(0);
    expect(contexts().signed_out).toBeUndefined();
    expect((await cli.run(['whoami', '--json'])).json).toMatchObject({ email: 'admin@example.test', role: 'admin' });
  }, SLOW);
});

describe('open NAME', () => {
  it("opens a function's public address with $BROWSER, prints it with --print or --json, and tells a same-named endpoint apart", async () => {
    const deployed = await cli.run(['deploy', join(import.meta.dirname, '..', '..', 'examples', 'hello-python'), '--json']);
    expect(deployed.exitCode, deployed.stderr).toBe(0);
    const publicUrl = deployed.json.agent.public_url as string;
    const opened = join(cli.home, 'opened.txt');
    const browser = join(cli.home, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`, { mode: 0o755 });
    const endpoint = await cli.run(['gateway', 'endpoints', 'create', 'hello', '--target', 'function/hello']);
    expect(endpoint.exitCode, endpoint.stderr).toBe(0);

    const [open, print, json, asEndpoint, missing, headless] = await Promise.all([
      cli.run(['open', 'hello'], { env: { BROWSER: browser } }),
      cli.run(['open', 'hello', '--print'], { env: { BROWSER: browser } }),
      cli.run(['open', 'hello', '--json'], { env: { BROWSER: browser } }),
      cli.run(['open', 'hello', '--kind', 'endpoint', '--json']),
      cli.run(['open', 'nope']),
      // No BROWSER and no display: the address is printed instead.
      cli.run(['open', 'hello'], { env: { BROWSER: '', DISPLAY: '', WAYLAND_DISPLAY: '' } }),
    ]);
    expect(open.exitCode, open.stderr).toBe(0);
    expect(open.stdout).toBe('');
    expect(open.stderr).toContain(`opening ${publicUrl} (function hello)`);
    expect(open.stderr).toContain('there is also an endpoint named hello: `platform open hello --kind endpoint`');
    // The browser runs detached: wait for it to have written the address it was given.
    for (let i = 0; i < 100 && !existsSync(opened); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(opened, 'utf8')).toBe(`${publicUrl}\n`);
    expect(print.stdout).toBe(publicUrl);
    expect(json.json).toEqual({ name: 'hello', kind: 'function', url: publicUrl, ready: true });
    expect(asEndpoint.json).toMatchObject({ kind: 'endpoint', url: expect.stringMatching(/^http:\/\/hello-[a-z0-9]+\.gw\.localhost:\d+$/), ready: false, message: expect.stringContaining('not published') });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('no agent, function, service or gateway endpoint named nope');
    // Only the plain `open` launched the browser.
    expect(readFileSync(opened, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(headless.exitCode, headless.stderr).toBe(0);
    expect(headless.stdout).toBe(publicUrl);
    expect(headless.stderr).toContain('no browser to open it with (set BROWSER)');
  }, SLOW);
});
