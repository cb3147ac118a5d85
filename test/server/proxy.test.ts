import { request } from 'node:http';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer, stopServer, type ServerProcess } from './helpers.js';

const ADMIN = { email: 'admin@example.test', password: 'Admin-Password-123' };
// 127.0.0.2 plays the reverse proxy; 127.0.0.1 is a client that talks to the server directly.
const PROXY = '127.0.0.2';
const DIRECT = '127.0.0.1';

let server: ServerProcess;
let port: number;

interface Answer {
  status: number;
  body: any;
  requestId: string;
}

function call(from: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: unknown; port?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = request(
      { host: '127.0.0.1', port: opts.port ?? port, localAddress: from, method, path, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode!, body: parsed, requestId: String(res.headers['x-request-id']) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let n = 0;
/** One failed sign-in (an unknown account each time, so only the per-address window counts). */
const failedSignIn = (from: string, forwardedFor?: string) =>
  call(from, 'POST', '/v1/auth/login', {
    body: { email: `nobody-${++n}@example.test`, password: 'Wrong-Password-1' },
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });

/** The access log lines written so far, each parsed (a line that is not JSON fails the test). */
const accessLines = () =>
  server
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The access line of a request; it is written when the response is over, so wait for it. */
async function accessLineOf(requestId: string): Promise<Record<string, unknown>> {
  const end = Date.now() + 5_000;
  for (;;) {
    const line = accessLines().find((l) => l.request_id === requestId);
    if (line) return line;
    if (Date.now() > end) throw new Error(`no access line for ${requestId}:\n${server.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  port = await freePort();
  server = await startServer(['--listen', `${DIRECT}:${port}`, '--behind-proxy', `${PROXY}/32`], {
    PLATFORM_SIGNIN_LIMIT_PER_IP: '3',
    PLATFORM_ADMIN_EMAIL: ADMIN.email,
    PLATFORM_ADMIN_PASSWORD: ADMIN.password,
  });
});
afterAll(async () => {
  await stopServer(server);
  rmSync(server?.home ?? '', { recursive: true, force: true });
});

describe('platform server start --behind-proxy', { timeout: 60_000 }, () => {
  it('ignores X-Forwarded-For from an untrusted peer: sign-in throttling counts the peer', async () => {
    for (let i = 1; i <= 3; i++) expect((await failedSignIn(DIRECT, `10.0.0.${i}`)).status).toBe(401);
    // A fourth address in the header changes nothing: the peer 127.0.0.1 has used its three attempts.
    const fourth = await failedSignIn(DIRECT, '10.0.0.4');
    expect(fourth.status).toBe(429);
    expect((await accessLineOf(fourth.requestId)).client).toBe(DIRECT);
  });

  it('honours X-Forwarded-For from the proxy: each client behind it has its own window', async () => {
    for (let i = 0; i < 3; i++) expect((await failedSignIn(PROXY, '192.0.2.10')).status).toBe(401);
    const throttled = await failedSignIn(PROXY, '192.0.2.10');
    expect(throttled.status).toBe(429);
    // Another client behind the same proxy, and the proxy itself, are not throttled by that one.
    expect((await failedSignIn(PROXY, '192.0.2.11')).status).toBe(401);
    expect((await failedSignIn(PROXY)).status).toBe(401);
    // A spoofed left-most entry proves nothing: the right-most hop the proxy added is the client.
    expect((await failedSignIn(PROXY, '192.0.2.11, 192.0.2.10')).status).toBe(429);
    expect((await accessLineOf(throttled.requestId)).client).toBe('192.0.2.10');
  });

  it('records the real client address in the audit of failed sign-ins', async () => {
    const login = await call(DIRECT, 'POST', '/v1/auth/login', { body: ADMIN, headers: { 'x-forwarded-for': '203.0.113.99' } });
    // 127.0.0.1 is throttled since the first test: the admin signs in through the proxy instead.
    expect(login.status).toBe(429);
    const viaProxy = await call(PROXY, 'POST', '/v1/auth/login', { body: ADMIN, headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(viaProxy.status).toBe(200);
    const audit = await call(PROXY, 'GET', '/v1/audit?action=auth.login_failed&page_size=100', { headers: { authorization: `Bearer ${viaProxy.body.token}` } });
    expect(audit.status).toBe(200);
    const sources = new Set(audit.body.entries.map((e: any) => e.details.source_address));
    expect(sources).toEqual(new Set([DIRECT, '192.0.2.10', '192.0.2.11', PROXY]));
  });

  it('takes X-Forwarded-Host for Host routing only from the proxy', async () => {
    const headers = { 'x-forwarded-host': 'nope-abcdef.apps.localhost', 'x-forwarded-for': '192.0.2.20' };
    const direct = await call(DIRECT, 'GET', '/healthz', { headers });
    expect(direct.status).toBe(200);
    const proxied = await call(PROXY, 'GET', '/healthz', { headers: { ...headers, 'x-forwarded-proto': 'https' } });
    expect(proxied.status).toBe(404);
    expect(proxied.body.error).toMatch(/no workload answers at nope-abcdef\.apps\.localhost/);
    expect(await accessLineOf(proxied.requestId)).toMatchObject({ route: '(workload address)', status: 404, client: '192.0.2.20', scheme: 'https' });
    expect(await accessLineOf(direct.requestId)).toMatchObject({ route: '/healthz', status: 200, client: DIRECT, scheme: 'http' });
  });

  it('believes no forwarded header on the loopback listener workloads call, even from the proxy address', async () => {
    const loopback = new URL((JSON.parse(readFileSync(join(server.home, 'daemon.json'), 'utf8')) as { url: string }).url);
    expect(Number(loopback.port)).not.toBe(port);
    const r = await call(PROXY, 'GET', '/healthz', { port: Number(loopback.port), headers: { 'x-forwarded-for': '192.0.2.30', 'x-forwarded-host': 'nope-abcdef.apps.localhost' } });
    expect(r.status).toBe(200);
    expect(await accessLineOf(r.requestId)).toMatchObject({ route: '/healthz', client: PROXY, scheme: 'http' });
  });

  it('writes one JSON access line per request with the route template and the principal, never a token', async () => {
    const login = await call(PROXY, 'POST', '/v1/auth/login', { body: ADMIN, headers: { 'x-forwarded-for': '198.51.100.8' } });
    const token = login.body.token as string;
    const auth = { authorization: `Bearer ${token}`, 'x-forwarded-for': '198.51.100.8' };
    const me = await call(PROXY, 'GET', '/v1/auth/me', { headers: auth });
    const missing = await call(PROXY, 'GET', '/v1/agents/no-such-agent?project=default', { headers: auth });
    expect(missing.status).toBe(404);
    const meLine = await accessLineOf(me.requestId);
    expect(Object.keys(meLine).sort()).toEqual(['client', 'duration_ms', 'method', 'principal', 'request_id', 'route', 'scheme', 'status', 'time']);
    expect(meLine).toMatchObject({ method: 'GET', route: '/v1/auth/me', status: 200, client: '198.51.100.8' });
    expect(meLine.principal).toMatch(/^user:[0-9a-f-]{36}$/);
    expect(typeof meLine.duration_ms).toBe('number');
    expect(Date.parse(String(meLine.time))).not.toBeNaN();
    expect(await accessLineOf(missing.requestId)).toMatchObject({ route: '/v1/agents/{name}', status: 404, principal: meLine.principal });
    expect(await accessLineOf(login.requestId)).toMatchObject({ route: '/v1/auth/login', status: 200, principal: null });
    // Every line is JSON, one per request, and no credential is ever in them.
    const lines = accessLines();
    expect(new Set(lines.map((l) => l.request_id)).size).toBe(lines.length);
    expect(server.stdout()).not.toContain(token);
    expect(server.stdout()).not.toContain(ADMIN.password);
  });
});
