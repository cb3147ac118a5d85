import Database from 'better-sqlite3';
import { execa } from 'execa';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { Chromium } from '../helpers/chromium.js';
import { PROCESS_ADMIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';

/**
 * `platform login --web`: the CLI polls while a person approves (or denies) its code on the
 * server's page in real headless chromium; polling faster than the interval gets slow_down; the
 * approval form refuses cross-site posts; only hashes of codes are stored.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const PERSON = { email: 'dana@example.test', password: 'Dana-Password-123!' };
let work: string;
let daemon: DaemonProcess;
let cli: ReturnType<typeof cliSandbox>;
let browser: Chromium;
let opened: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'platform-signin-web-'));
  daemon = await spawnDaemonProcess(join(work, 'server-home'), { PLATFORM_DEVICE_POLL_INTERVAL_SECONDS: '1' });
  const admin = await loginToken(daemon.url);
  const made = await fetch(`${daemon.url}/v1/users`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ email: PERSON.email, password: PERSON.password }) });
  expect(made.status, await made.text()).toBe(201);
  // $BROWSER is how the CLI opens the page: this one only records the address it was given.
  opened = join(work, 'opened.txt');
  const opener = join(work, 'browser.sh');
  writeFileSync(opener, `#!/bin/sh\nprintf %s "$1" > '${opened}'\n`);
  chmodSync(opener, 0o755);
  cli = cliSandbox({ BROWSER: opener });
  expect((await cli.run(['context', 'add', 'srv', daemon.url, '--use'])).exitCode).toBe(0);
  browser = Chromium.launch(join(work, 'chromium'));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  daemon?.child.kill('SIGTERM');
  await daemon?.exited;
  await cli?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Starts `login --web` in the background and resolves once it has shown its code. */
async function startWebLogin(): Promise<{ cli: PromiseLike<{ exitCode?: number; stdout: unknown; stderr: unknown }>; code: string; url: string }> {
  rmSync(opened, { force: true });
  const child = execa('node', [BIN, 'login', '--web', '--json'], { env: cli.env, extendEnv: true, reject: false, stdin: 'ignore', timeout: 60_000 });
  let err = '';
  const shown = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /one-time code: ([A-Z]{4}-[A-Z]{4})\nThen open (\S+) /.exec(err);
      if (m) resolve(m);
    });
    child.once('exit', () => reject(new Error(`login --web ended before showing a code: ${err}`)));
  });
  return { cli: child, code: shown[1]!, url: shown[2]! };
}

/** Fills the approval page and presses a button; returns the text of the page it leads to. */
async function decide(page: Awaited<ReturnType<Chromium['newPage']>>, who: { email: string; password: string }, button: 'approve' | 'deny'): Promise<string> {
  await page.submit(`(() => {
    document.querySelector('#email').value = ${JSON.stringify(who.email)};
    document.querySelector('#password').value = ${JSON.stringify(who.password)};
    document.querySelector('#${button}').click();
  })()`);
  return page.text();
}

describe('login --web', () => {
  it('approved in the browser: the CLI signs in and whoami shows the person', async () => {
    const run = await startWebLogin();
    expect(run.url).toBe(`${daemon.url}/device`);
    // The CLI opened the page with the code filled in.
    await expect.poll(() => existsSync(opened)).toBe(true);
    const complete = readFileSync(opened, 'utf8');
    expect(complete).toBe(`${daemon.url}/device?user_code=${run.code}`);

    const page = await browser.newPage();
    await page.goto(complete);
    expect(await page.evaluate('document.querySelector("#user_code").value')).toBe(run.code);
    // A wrong password is refused on the page, which offers the form again.
    expect(await decide(page, { email: PERSON.email, password: 'Not-The-Password-1' }, 'approve')).toMatch(/Invalid e-mail or password/);
    expect(await page.evaluate('document.querySelector("#user_code").value')).toBe(run.code);
    expect(await decide(page, PERSON, 'approve')).toMatch(new RegExp(`Signed in as ${PERSON.email}`));

    const done = await run.cli;
    expect(done.exitCode, String(done.stderr)).toBe(0);
    expect(JSON.parse(String(done.stdout))).toMatchObject({ context: 'srv', email: PERSON.email, role: 'user' });
    const me = await cli.run(['whoami', '--json']);
    expect(me.exitCode, me.stderr).toBe(0);
    expect(me.json).toMatchObject({ email: PERSON.email, context: 'srv' });
    const stored = JSON.parse(readFileSync(join(cli.home, 'credentials.json'), 'utf8')).srv;
    expect(stored.refreshToken).toMatch(/^rt_/);

    // The code is spent: approving it again is refused.
    await page.goto(complete);
    expect(await decide(page, PERSON, 'approve')).toMatch(/unknown, already used or expired/);
  });

  it('logout ends the session on the server: its tokens get 401 at once', async () => {
    const stored = JSON.parse(readFileSync(join(cli.home, 'credentials.json'), 'utf8')).srv as { token: string; refreshToken: string };
    const me = (token: string) => fetch(`${daemon.url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect((await me(stored.token)).status).toBe(200);
    const out = await cli.run(['logout', '--json']);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(out.json).toMatchObject({ context: 'srv', signed_out: true, session_ended: true });
    expect((await me(stored.token)).status).toBe(401);
    const refresh = await fetch(`${daemon.url}/v1/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: stored.refreshToken }) });
    expect(refresh.status).toBe(401);
    const whoami = await cli.run(['whoami']);
    expect(whoami.exitCode).toBe(1);
    expect(whoami.stderr).toMatch(/platform login/);
  });

  it('denied in the browser: the CLI fails and says so', async () => {
    const run = await startWebLogin();
    const page = await browser.newPage();
    await page.goto(`${daemon.url}/device`);
    await page.evaluate(`document.querySelector('#user_code').value = ${JSON.stringify(run.code.toLowerCase().replace('-', ' '))}`);
    expect(await decide(page, PROCESS_ADMIN, 'deny')).toMatch(/The sign-in was denied/);
    const done = await run.cli;
    expect(done.exitCode).toBe(1);
    expect(JSON.parse(String(done.stdout))).toMatchObject({ error: 'the sign-in was denied on the approval page', next: expect.stringMatching(/login --web/) });
  });

  it('polling faster than the interval gets slow_down with a longer interval', async () => {
    const start = await fetch(`${daemon.url}/v1/auth/device/code`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const code = (await start.json()) as { device_code: string; interval: number; user_code: string };
    expect(code.interval).toBe(1);
    const poll = async () => {
      const r = await fetch(`${daemon.url}/v1/auth/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_code: code.device_code }) });
      return { status: r.status, body: (await r.json()) as { code?: string; interval?: number; error: string; request_id: string } };
    };
    const first = await poll();
    expect(first).toMatchObject({ status: 400, body: { code: 'authorization_pending', request_id: expect.stringMatching(/^req_/) } });
    const second = await poll();
    expect(second).toMatchObject({ status: 400, body: { code: 'slow_down', interval: 6 } });

    // Only hashes of the codes are kept.
    const db = new Database(join(work, 'server-home', 'platform.db'), { readonly: true, fileMustExist: true });
    try {
      const rows = JSON.stringify(db.prepare('SELECT * FROM auth_device_codes').all());
      expect(rows).not.toContain(code.device_code);
      expect(rows).not.toContain(code.user_code.replace('-', ''));
      expect(rows).not.toContain(code.user_code);
    } finally {
      db.close();
    }
    const unknown = await fetch(`${daemon.url}/v1/auth/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_code: 'dc_nope', client_secret: 'x' }) });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/client_secret/);
  });

  it('the approval form refuses a post without its cookie, and unknown fields', async () => {
    const form = (fields: Record<string, string>, cookie?: string) =>
      fetch(`${daemon.url}/device`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) }, body: new URLSearchParams(fields).toString() });
    const fields = { user_code: 'BCDF-GHJK', email: PERSON.email, password: PERSON.password, csrf: 'made-up', action: 'approve' };
    const crossSite = await form(fields);
    expect(crossSite.status).toBe(403);
    expect(await crossSite.text()).toMatch(/came from another site/);
    const extra = await form({ ...fields, remember: '1' }, 'platform_device_csrf=made-up');
    expect(extra.status).toBe(400);
    expect(((await extra.json()) as { error: string }).error).toBe('unknown body field: remember');
    const page = await fetch(`${daemon.url}/device`);
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
  });
});
