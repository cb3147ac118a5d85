import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliSandbox } from '../helpers/cli.js';

/**
 * Issue 25 §3, "small things users trip on", through the built CLI against the daemon it starts.
 * New topics stay pending for a second here so `--wait` has something to wait for.
 */
const cli = cliSandbox({ PLATFORM_PUBSUB_CONVERGE_MS: '1000', PLATFORM_VECTOR_READY_DELAY_MS: '0' });
const SLOW = 120_000;
afterAll(() => cli.stop(), 60_000);

let url: string;
/** The API as the CLI's own credential (the key it made for itself on the local context). */
const api = async (method: string, path: string, body?: unknown) => {
  const token = JSON.parse(readFileSync(join(cli.home, 'credentials.json'), 'utf8')).local.token as string;
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
};

beforeAll(async () => {
  const r = await cli.run(['daemon', 'start', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  url = r.json.url;
}, SLOW);

describe('topics create --wait', () => {
  it('without --wait the topic is pending; with --wait it is ready and takes a publish at once', async () => {
    const [quick, waited] = await Promise.all([
      cli.run(['topics', 'create', 'quick', '--json']),
      cli.run(['topics', 'create', 'waited', '--wait']),
    ]);
    expect(quick.exitCode, quick.stderr).toBe(0);
    expect(quick.json).toMatchObject({ name: 'quick', state: 'pending', ready: false });
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.stdout).toMatch(/^state\s+ready$/m);
    expect(waited.stderr).toContain('topic waited created and ready');
    const published = await cli.run(['publish', 'waited', '--text', 'hello', '--json']);
    expect(published.exitCode, published.stderr).toBe(0);
    expect(published.json.published).toBe(1);
  }, SLOW);
});

describe('pull without --ack', () => {
  it('says on stderr that the messages are leased, when they come back and how to acknowledge them', async () => {
    const sub = await cli.run(['subscriptions', 'create', 'waited', 'reader', '--ack-deadline', '30']);
    expect(sub.exitCode, sub.stderr).toBe(0);
    for (let i = 0; i < 100 && (await cli.run(['subscriptions', 'get', 'waited', 'reader', '--json'])).json?.ready !== true; i++) await new Promise((r) => setTimeout(r, 100));
    const two = await cli.run(['publish', 'waited', '--file', '-'], { input: '{"text":"one"}\n{"text":"two"}\n' });
    expect(two.exitCode, two.stderr).toBe(0);
    const pulled = await cli.run(['pull', 'waited/reader', '--max', '1', '--wait', '5']);
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    expect(pulled.stdout).toMatch(/one/);
    expect(pulled.stderr).toContain('this message is leased, not removed: unless acknowledged within 30 s they are delivered again');
    expect(pulled.stderr).toContain('`platform ack waited/reader ACK_ID...`');
    expect(pulled.stderr).toContain('or pull with --ack');
    // Under --json stdout carries only the result and the note, meant for people, is left out.
    const asJson = await cli.run(['pull', 'reader', '--topic', 'waited', '--max', '1', '--wait', '5', '--json']);
    expect(asJson.exitCode, asJson.stderr).toBe(0);
    expect(asJson.json.messages).toHaveLength(1);
    expect(asJson.stderr).toBe('');
    expect((await cli.run(['publish', 'waited', '--text', 'three'])).exitCode).toBe(0);
    const acked = await cli.run(['pull', 'waited/reader', '--wait', '5', '--ack']);
    expect(acked.stderr).toBe('acknowledged 1');
    const ackID = pulled.stdout.split('\n')[1]!.trim().split(/\s+/).pop()!;
    expect((await cli.run(['ack', 'waited/reader', ackID])).stdout).toBe('acknowledged 1 of 1');
  }, SLOW);
});

describe('indexes list: live point counts', () => {
  it('shows the points just upserted (the API view lags by design), in the table, --json and get', async () => {
    expect((await cli.run(['indexes', 'create', 'docs', '--dimensions', '2'])).exitCode).toBe(0);
    const file = join(cli.home, 'points.ndjson');
    writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify({ id: i, vector: [i, 1], payload: { odd: i % 2 === 1 } })).join('\n') + '\n');
    const up = await cli.run(['indexes', 'upsert', 'docs', '--file', file]);
    expect(up.exitCode, up.stderr).toBe(0);
    const [human, json, get] = await Promise.all([cli.run(['indexes', 'list']), cli.run(['indexes', 'list', '--json']), cli.run(['indexes', 'get', 'docs', '--json'])]);
    expect(human.stdout).toMatch(/^docs\s+2\s+cosine\s+none\s+ready\s+3\s+/m);
    expect(json.json.indexes[0]).toMatchObject({ name: 'docs', points_count: 3, vectors_count: 3 });
    expect(get.json.index).toMatchObject({ points_count: 3 });
    const projectID = (await api('GET', '/v1/projects/default')).body.id as string;
    // The API's own figure is refreshed every five minutes (spec 3 §2.1): still 0 here.
    expect((await api('GET', `/v1/projects/${projectID}/indexes/docs`)).body.index.points_count).toBe(0);
    const base = `/v1/projects/${projectID}/indexes/docs:count`;
    const [all, odd, unknownField] = await Promise.all([
      api('POST', base, {}),
      api('POST', base, { filter: { must: [{ key: 'odd', match: { value: true } }] } }),
      api('POST', base, { exact: true }),
    ]);
    expect(all).toEqual({ status: 200, body: { index: 'docs', count: 3 } });
    expect(odd.body).toEqual({ index: 'docs', count: 2 });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error).toMatch(/exact/);
  }, SLOW);
});

describe('quota counts running instances', () => {
  it('a running cache server fills the instances quota, shown per area', async () => {
    const before = await cli.run(['quota', '--json']);
    const instances = (r: typeof before) => r.json.quotas.find((q: { resource: string }) => q.resource === 'instances');
    expect(instances(before)).toMatchObject({ used: 0, by_source: { agents: 0, cache: 0, mcp: 0, serverless: 0 } });
    const created = await cli.run(['cache', 'create', 'sessions', '--wait', '--json']);
    expect(created.exitCode, created.stderr).toBe(0);
    const [after, human] = await Promise.all([cli.run(['quota', '--json']), cli.run(['quota'])]);
    expect(instances(after)).toMatchObject({ used: 1, limit: 50, by_source: { cache: 1, agents: 0 } });
    expect(human.stdout).toMatch(/^instances\s+1\s+50\s+count\s+agents 0, cache 1, mcp 0, serverless 0$/m);
  }, SLOW);
});

describe('auth token', () => {
  const me = async (token: string) => {
    const res = await fetch(`${url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
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
    expect(existsSync(credentials) ? JSON.parse(readFileSync(credentials, 'utf8')).local : undefined).toBeUndefined();
    expect((await fetch(`${url}/v1/auth/me`, { headers: { authorization: `Bearer ${session}` } })).status).toBe(401);

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

    const [open, print, json, asEndpoint, missing] = await Promise.all([
      cli.run(['open', 'hello'], { env: { BROWSER: browser } }),
      cli.run(['open', 'hello', '--print'], { env: { BROWSER: browser } }),
      cli.run(['open', 'hello', '--json'], { env: { BROWSER: browser } }),
      cli.run(['open', 'hello', '--kind', 'endpoint', '--json']),
      cli.run(['open', 'nope']),
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

    // No BROWSER and no display: the address is printed instead.
    const headless = await cli.run(['open', 'hello'], { env: { BROWSER: '', DISPLAY: '', WAYLAND_DISPLAY: '' } });
    expect(headless.exitCode, headless.stderr).toBe(0);
    expect(headless.stdout).toBe(publicUrl);
    expect(headless.stderr).toContain('no browser to open it with (set BROWSER)');
  }, SLOW);
});
