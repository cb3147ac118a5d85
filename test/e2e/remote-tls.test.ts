import { execa } from 'execa';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { testCa } from '../helpers/test-ca.js';
import { BIN, freePort, startServer, stopServer, type ServerProcess } from '../server/helpers.js';

/**
 * Issue 24 end to end: a real `platform server start` over TLS with a CA made here, and people
 * who reach it only through the CLI, each with a state directory of their own. The server's
 * locator is moved away while the CLI runs: nothing the CLI does may come from the server's disk.
 */
const ADMIN = { email: 'owner@example.test', password: 'Owner-Password-1' };
const DEV = { email: 'dev@example.test', password: 'Developer-Pass-1' };

let work: string;
let server: ServerProcess;
let caFile: string;
let locator: string;
// The CLI environments carry nothing of the server: only their own PLATFORM_HOME.
const owner = cliSandbox();
const dev = cliSandbox();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'platform-e2e-'));
  const ca = testCa(work);
  caFile = ca.caFile;
  const { cert, key } = ca.issue('0E2E');
  const port = await freePort();
  server = await startServer(['--listen', `127.0.0.1:${port}`, '--tls-cert', cert, '--tls-key', key], { PLATFORM_VECTOR_READY_DELAY_MS: '0' });
  expect(server.url).toBe(`https://127.0.0.1:${port}`);
  locator = join(server.home, 'daemon.json');
  // The daemon writes its locator again once it has probed the isolation: hide the final one.
  const probed = Date.now() + 30_000;
  while (!(existsSync(locator) && 'isolation' in JSON.parse(readFileSync(locator, 'utf8')))) {
    if (Date.now() > probed) throw new Error('the locator never named the isolation');
    await new Promise((r) => setTimeout(r, 20));
  }
  renameSync(locator, `${locator}.hidden`);
}, 60_000);

afterAll(async () => {
  if (locator && existsSync(`${locator}.hidden`)) renameSync(`${locator}.hidden`, locator);
  await stopServer(server);
  await owner.stop();
  await dev.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Every file under a directory, relative to it, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

async function ok(cli: ReturnType<typeof cliSandbox>, args: string[], input?: string) {
  const r = await cli.run(args, input === undefined ? {} : { input });
  expect(r.exitCode, `${args.join(' ')}:\n${r.stderr}\n${r.stdout}`).toBe(0);
  return r;
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  await expect.poll(check, { timeout: timeoutMs, interval: 200 }).toBe(true);
}

describe('a team server over TLS, driven only through the CLI', () => {
  it('the owner adds the context with the CA, creates the first admin with the setup token and invites a developer', async () => {
    const token = /setup token: (setup_[A-Za-z0-9_-]+)/.exec(server.stderr())?.[1];
    expect(token).toBeTruthy();

    // The wrong CA is refused plainly, before anything is saved.
    const strangerDir = join(work, 'stranger');
    mkdirSync(strangerDir);
    const wrongCa = await owner.run(['context', 'add', 'prod', server.url, '--ca-cert', testCa(strangerDir).caFile]);
    expect(wrongCa.exitCode).toBe(1);
    expect(wrongCa.stderr).toMatch(/the server's certificate is not trusted .*presents a certificate from an authority this machine does not know/);
    expect(wrongCa.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    await ok(owner, ['context', 'add', 'prod', server.url, '--ca-cert', caFile]);
    await ok(owner, ['context', 'use', 'prod']);
    const setup = await ok(owner, ['login', '--setup-token', '--email', ADMIN.email, '--json'], `${token}\n${ADMIN.password}\n`);
    expect(setup.json).toMatchObject({ context: 'prod', email: ADMIN.email, role: 'admin', setup: true });
    expect((await ok(owner, ['whoami', '--json'])).json).toMatchObject({ email: ADMIN.email });
    // A remote context has no implied project (only the local one defaults to `default`).
    await ok(owner, ['projects', 'use', 'default']);

    const invite = await ok(owner, ['invitations', 'create', DEV.email, '--role', 'member', '--json']);
    const inviteToken: string = invite.json.invitation.token;
    expect(inviteToken).toMatch(/^inv_/);

    // The developer's machine: its own context (same CA file), accepts, then signs in with a password.
    await ok(dev, ['context', 'add', 'prod', server.url, '--ca-cert', caFile, '--use']);
    const accepted = await ok(dev, ['invitations', 'accept', inviteToken, '--password-stdin', '--json'], `${DEV.password}\n`);
    expect(accepted.json).toMatchObject({ accepted: true, role: 'member', email: DEV.email });
    await ok(dev, ['login', '--email', DEV.email, '--password-stdin'], DEV.password);
    await ok(dev, ['projects', 'use', 'default']);
    expect((await ok(dev, ['whoami', '--json'])).json).toMatchObject({ email: DEV.email });
    const members = await ok(owner, ['members', 'list', '--json']);
    expect(JSON.stringify(members.json)).toContain(DEV.email);
  });

  it('the developer deploys a function, invokes it and follows its logs', { timeout: 60_000 }, async () => {
    const dir = join(work, 'hello');
    cpSync(join(import.meta.dirname, '..', '..', 'templates', 'function-nodejs'), dir, { recursive: true });
    await ok(dev, ['deploy', dir, '--name', 'hello', '--json']);
    expect((await ok(dev, ['invoke', 'hello', '-m', 'over tls', '--json'])).json.reply).toBe('hello over tls');

    const follow = execa('node', [BIN, 'logs', 'hello', '-f'], { env: dev.env, extendEnv: true, reject: false, stdin: 'ignore' });
    let seen = '';
    follow.stdout!.on('data', (b: Buffer) => (seen += b.toString()));
    try {
      // Lines logged after the follow began arrive while it runs.
      await until(async () => {
        await dev.run(['invoke', 'hello', '-m', 'followed']);
        return seen.includes('greeting followed');
      }, 30_000);
    } finally {
      follow.kill('SIGTERM');
      await follow;
    }
  });

  it('the developer keeps a secret, and uses a topic and an index the owner made', { timeout: 60_000 }, async () => {
    const set = await ok(dev, ['secrets', 'set', 'db-password', '--json'], 'tls-secret-value\n');
    expect(set.json).toMatchObject({ name: 'db-password' });
    expect((await ok(dev, ['secrets', 'get', 'db-password', '--json'])).json).toMatchObject({ name: 'db-password' });

    // Topics and indexes are the project admin's to make (a member is refused); members use them.
    expect((await dev.run(['topics', 'create', 'orders'])).stderr).toMatch(/requires the admin role on the project/);
    await ok(owner, ['topics', 'create', 'orders']);
    await ok(owner, ['subscriptions', 'create', 'orders', 'billing']);
    await ok(owner, ['indexes', 'create', 'docs', '--dimensions', '3']);
    await until(async () => (await dev.run(['subscriptions', 'get', 'orders', 'billing', '--json'])).json?.ready === true);
    await ok(dev, ['publish', 'orders', '--text', 'order 42 paid']);
    const pulled = await ok(dev, ['pull', 'orders/billing', '--wait', '5', '--ack', '--json']);
    expect(pulled.json.messages.map((m: { data: string }) => Buffer.from(m.data, 'base64').toString())).toEqual(['order 42 paid']);
    expect(pulled.json.acknowledged).toBe(1);

    await until(async () => (await dev.run(['indexes', 'get', 'docs', '--json'])).json?.index?.ready === true);
    const points = join(work, 'points.ndjson');
    writeFileSync(points, [1, 2, 3].map((i) => JSON.stringify({ id: i, vector: [i, 1, 0], payload: { n: i } })).join('\n'));
    expect((await ok(dev, ['indexes', 'upsert', 'docs', '--file', points, '--json'])).json).toEqual({ index: 'docs', upserted_count: 3 });
    const q = await ok(dev, ['indexes', 'query', 'docs', '--vector', '[3, 1, 0]', '--top-k', '1', '--json']);
    expect(q.json.results.map((r: { id: number }) => r.id)).toEqual([3]);
  });

  it('the CLI homes hold only their own contexts and credentials (no local daemon ever started), and the server home none of them', () => {
    for (const cli of [owner, dev]) {
      const files = filesUnder(cli.home);
      expect(files).toEqual(['contexts.json', 'credentials.json']);
    }
    // Nor did anything of the CLI land in the server's home.
    const serverFiles = filesUnder(server.home);
    expect(serverFiles).toContain('platform.db');
    expect(serverFiles.filter((f) => /^(contexts|credentials)\.json$/.test(f))).toEqual([]);
    // The server's locator stayed hidden throughout: every command above reached the server by its URL.
    expect(existsSync(locator)).toBe(false);
  });
});
