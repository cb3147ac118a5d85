import Database from 'better-sqlite3';
import { execa } from 'execa';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, freePort, startServer, stopServer, type ServerProcess } from './helpers.js';

const ADMIN = { email: 'admin@example.test', password: 'Admin-Password-123' };
const work = mkdtempSync(join(tmpdir(), 'platform-server-shutdown-'));
const cliHome = join(work, 'cli');
const fnDir = join(work, 'slow');

let server: ServerProcess;
let port: number;
let token: string;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Processes whose command line names the server's state directory: workloads, builds, caches. */
function processesUnder(home: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(home)) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** A new TCP connection's answer to GET /healthz, or the connection error's code. */
const freshConnection = () =>
  new Promise<string>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });

beforeAll(async () => {
  port = await freePort();
  server = await startServer(['--listen', `127.0.0.1:${port}`, '--shutdown-timeout', '20', '--apps-domain', 'apps.example.test', '--public-url', `http://platform.example.test:${port}`], {
    PLATFORM_ADMIN_EMAIL: ADMIN.email,
    PLATFORM_ADMIN_PASSWORD: ADMIN.password,
    PLATFORM_SCALE_TO_ZERO_SECONDS: '120',
  });
  const env = { PLATFORM_HOME: cliHome, PLATFORM_API_URL: `http://127.0.0.1:${port}`, PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1' };
  const cli = (args: string[], input?: string) => execa('node', [BIN, ...args], { env, input, reject: false, timeout: 120_000 });
  const [login, init] = await Promise.all([cli(['login', '--email', ADMIN.email, '--password-stdin'], ADMIN.password), cli(['init', fnDir, '--template', 'function-python'])]);
  expect(login.exitCode, login.stderr).toBe(0);
  expect(init.exitCode, init.stderr).toBe(0);
  writeFileSync(
    join(fnDir, 'main.py'),
    [
      'import time',
      '',
      'def handle(event):',
      '    if event.get("message") == "slow":',
      '        print("slow invoke started", flush=True)',
      '        time.sleep(3)',
      '    return {"done": event.get("message")}',
      '',
    ].join('\n'),
  );
  const deploy = await cli(['deploy', fnDir]);
  expect(deploy.exitCode, deploy.stderr).toBe(0);
  const res = await fetch(`http://127.0.0.1:${port}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  token = ((await res.json()) as { token: string }).token;
}, 180_000);
afterAll(async () => {
  await stopServer(server);
  rmSync(server?.home ?? '', { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** POST with a Host header of our choosing (fetch does not let a caller set Host). */
const postWithHost = (host: string, path: string, body: string, headers: Record<string, string>) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { host, 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });

describe('SIGTERM of platform server start', { timeout: 90_000 }, () => {
  it('serves the function at <name>-<short>.<apps-domain> by Host, with the public URL\'s scheme and port', async () => {
    const view = await fetch(`http://127.0.0.1:${port}/v1/agents/slow?project=default`, { headers: { authorization: `Bearer ${token}` } });
    const url = ((await view.json()) as { url: string }).url;
    expect(url).toMatch(new RegExp(`^http://slow-[a-z][a-z0-9]{5}\\.apps\\.example\\.test:${port}$`));
    const r = await postWithHost(new URL(url).host, '/', '{"message":"by host"}', { authorization: `Bearer ${token}` });
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.text)).toMatchObject({ done: 'by host' });
    // The old local domain is not this server's.
    const other = await postWithHost(new URL(url).host.replace('apps.example.test', 'apps.localhost'), '/', '{}', { authorization: `Bearer ${token}` });
    expect(other.status).toBe(404);
  });

  it('finishes a streamed invoke in flight, refuses new connections, stops the workload and exits 0', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const warm = await fetch(`http://127.0.0.1:${port}/v1/agents/slow/invoke?project=default`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"message":"warm"}' });
    expect(warm.status).toBe(200);
    const db = new Database(join(server.home, 'platform.db'), { readonly: true });
    const pids = (db.prepare("SELECT i.pid FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = 'slow'").all() as { pid: number }[]).map((r) => r.pid);
    db.close();
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.every(alive)).toBe(true);

    // Follow the instance's log to know when the slow invoke is inside the handler.
    const follow = new AbortController();
    const logs = await fetch(`http://127.0.0.1:${port}/v1/agents/slow/logs?project=default&follow=true`, { headers: auth, signal: follow.signal });
    const started = (async () => {
      const reader = logs.body!.getReader();
      let seen = '';
      while (!seen.includes('slow invoke started')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`log follow ended before the invoke started: ${seen}`);
        seen += Buffer.from(value).toString();
      }
    })();
    const streamed = fetch(`http://127.0.0.1:${port}/v1/agents/slow/invoke/stream?project=default`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"message":"slow"}',
    }).then(async (r) => ({ status: r.status, type: r.headers.get('content-type'), text: await r.text(), requestId: r.headers.get('x-request-id') }));
    await started;
    // A follow never ends by itself: this one is done, so it does not hold the stop to its deadline.
    follow.abort();

    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    await server.waitForStderr(/"msg":"daemon stopping"/);
    // Not served: refused, or reset when it reached the listen queue in the instant between the
    // "stopping" line and the listener's close (seen under load).
    expect(['ECONNREFUSED', 'ECONNRESET']).toContain(await freshConnection());

    const answer = await streamed;
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/application\/x-ndjson/);
    expect(JSON.parse(answer.text.trim())).toMatchObject({ done: 'slow' });

    const code = await server.exited;
    expect(code).toBe(0);
    // It waited for the stream, not for the 20 s deadline.
    expect(Date.now() - signalledAt).toBeLessThan(20_000);
    expect(server.stderr()).toMatch(/"msg":"public listener drained","outcome":"drained"/);
    expect(pids.filter(alive)).toEqual([]);
    expect(processesUnder(server.home)).toEqual([]);
    const line = server
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.request_id === answer.requestId);
    expect(line).toMatchObject({ route: '/v1/agents/{name}/invoke/stream', status: 200, method: 'POST' });
  });
});
