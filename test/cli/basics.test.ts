import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cliSandbox } from '../helpers/cli.js';

const cli = cliSandbox();
afterAll(() => cli.stop());

describe('CLI against a real daemon it spawns', () => {
  let url: string;
  beforeAll(async () => {
    const r = await cli.run(['daemon', 'start', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), pid: expect.any(Number) });
    url = r.json.url;
  });

  it('a second start reports the running daemon', async () => {
    const r = await cli.run(['daemon', 'start', '--json']);
    expect(r.json).toMatchObject({ url, already_running: true });
    const human = await cli.run(['daemon', 'start']);
    expect(human.stdout).toContain(`daemon already running at ${url}`);
  });

  it('daemon status reports it, in text and JSON', async () => {
    const r = await cli.run(['daemon', 'status', '--json']);
    expect(r.exitCode).toBe(0);
    expect(r.json).toMatchObject({ running: true, url });
    // The internal listener (private MCP servers' addresses) is reported beside the main url.
    expect(r.json.internal_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(r.json.internal_url).not.toBe(url);
    expect((await cli.run(['daemon', 'status'])).stdout).toMatch(/state\s+running/);
  });

  it('the local context signs in by itself as the bootstrap admin', async () => {
    const r = await cli.run(['whoami', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ email: 'admin@example.test', role: 'admin', must_change_password: false, context: 'local', url });
    const cred = join(cli.home, 'credentials.json');
    expect(existsSync(cred)).toBe(true);
    expect(statSync(cred).mode & 0o777).toBe(0o600);
    // The password is stored nowhere: the CLI keeps a personal API key (see credentials.test.ts).
    expect(existsSync(join(cli.home, 'keys', 'admin.json'))).toBe(false);
    expect(readFileSync(cred, 'utf8')).not.toContain('Admin-Password-123');
  });

  it('projects list shows the default project as a table and as JSON', async () => {
    const human = await cli.run(['projects', 'list']);
    expect(human.exitCode).toBe(0);
    expect(human.stdout.split('\n')[0]).toMatch(/^SLUG\s+NAME\s+SHORT\s+ROLE\s+METADATA ROLE\s+ID$/);
    expect(human.stdout).toMatch(/^default\s+Default project\s+[a-z0-9]{6}\s+admin\s+admin\s+[0-9a-f-]{36}$/m);
    const json = await cli.run(['projects', 'list', '--json']);
    expect(json.json.projects).toHaveLength(1);
    expect(json.json.projects[0]).toMatchObject({ slug: 'default', your_role: 'admin', your_metadata_role: 'admin' });
  });

  it('login with --password-stdin, then a wrong password fails with exit 1 and the envelope', async () => {
    const ok = await cli.run(['login', '--email', 'admin@example.test', '--password-stdin', '--json'], { input: 'Admin-Password-123\n' });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.json).toMatchObject({ email: 'admin@example.test', stored_in: 'file' });
    const bad = await cli.run(['login', '--email', 'admin@example.test', '--password-stdin'], { input: 'nope' });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/Error: invalid email or password/);
    expect(bad.stderr).toMatch(/request id: req_[0-9a-f]{24}/);
    const badJson = await cli.run(['login', '--email', 'admin@example.test', '--password-stdin', '--json'], { input: 'nope' });
    expect(badJson.exitCode).toBe(1);
    expect(badJson.json).toMatchObject({ error: 'invalid email or password', status: 401, request_id: expect.stringMatching(/^req_/) });
  });

  it('login without a TTY and without --password-stdin fails fast with usage advice', async () => {
    const r = await cli.run(['login', '--email', 'admin@example.test']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/not a TTY/);
  });

  it('usage errors exit 2', async () => {
    const r = await cli.run(['projects', 'list', '--page-size', 'abc']);
    expect(r.exitCode).toBe(2);
  });

  it('PLATFORM_API_URL and PLATFORM_TOKEN override the context', async () => {
    const login = await cli.run(['login', '--email', 'admin@example.test', '--password-stdin', '--json'], { input: 'Admin-Password-123' });
    const token = (await cli.run(['whoami', '--json'], {})).json;
    expect(token.email).toBe('admin@example.test');
    const r = await cli.run(['whoami', '--json'], { env: { PLATFORM_API_URL: url, PLATFORM_TOKEN: 'invalid' } });
    expect(login.exitCode).toBe(0);
    expect(r.exitCode).toBe(1);
    expect(r.json.status).toBe(401);
  });

  it('daemon stop stops it and status then exits 1', async () => {
    expect((await cli.run(['daemon', 'stop', '--json'])).json).toMatchObject({ stopped: true });
    const r = await cli.run(['daemon', 'status', '--json']);
    expect(r.exitCode).toBe(1);
    expect(r.json.running).toBe(false);
  });
});
