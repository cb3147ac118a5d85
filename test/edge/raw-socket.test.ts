import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { isEnvelope, rawExchange } from './raw.js';

/**
 * The HTTP edge against a real daemon process (issue 16 §3): bytes no client library would send,
 * written on a plain socket. Each case checks the answer, then that the process is still alive
 * and /healthz still answers. Timeouts are set short (1 s headers, 2 s request) so slow-client
 * cases run in seconds.
 */
describe.skipIf(!existsSync(DAEMON_MAIN))('HTTP edge over a raw socket (spawned daemon)', () => {
  let d: DaemonProcess;
  let home: string;
  let port: number;
  let token: string;
  let projectId: string;
  const get = (lines: string) => `${lines}\r\nHost: 127.0.0.1\r\n\r\n`;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'platform-edge-'));
    d = await spawnDaemonProcess(home, {
      PLATFORM_HTTP_HEADERS_TIMEOUT_SECONDS: '1',
      PLATFORM_HTTP_REQUEST_TIMEOUT_SECONDS: '2',
      PLATFORM_HTTP_MAX_CONNECTIONS: '16',
    });
    port = Number(new URL(d.url).port);
    token = await loginToken(d.url);
    const r = await fetch(`${d.url}/v1/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ slug: 'edge' }) });
    expect(r.status).toBe(201);
    projectId = ((await r.json()) as { project: { id: string } }).project.id;
  });
  afterAll(async () => {
    d?.child.kill('SIGTERM');
    await d?.exited;
    rmSync(home, { recursive: true, force: true });
  });

  /** The process answers /healthz and has not exited. */
  async function alive(): Promise<void> {
    expect(d.child.exitCode, d.stderr()).toBeNull();
    expect(() => process.kill(d.pid, 0)).not.toThrow();
    expect((await fetch(`${d.url}/healthz`)).status).toBe(200);
  }

  it.each([
    ['GET http://[::1/x HTTP/1.1', 400, /malformed request target/],
    ['GET //[/x HTTP/1.1', 404, /no route/],
    ['GET http://a:99999/healthz HTTP/1.1', 400, /malformed request target/],
    ['GET * HTTP/1.1', 400, /malformed request target/],
    ['GET http://a:80/healthz?x=1 HTTP/1.1', 200, undefined],
  ])('request target %s: an answer, and the daemon lives', async (line, status, message) => {
    const { responses } = await rawExchange(port, [get(line)]);
    expect(responses[0]?.status).toBe(status);
    if (message) {
      expect(isEnvelope(responses[0]!), responses[0]!.body).toBe(true);
      expect(responses[0]!.json.error).toMatch(message);
    }
    await alive();
  });

  it('requests the parser rejects get the envelope with X-Request-Id, then the connection closes', async () => {
    for (const [req, status, message] of [
      ['POST /v1/auth/login HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n', 400, /invalid Content-Length/],
      ['POST /v1/auth/login HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400, /invalid Content-Length/],
      ['GET /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, /malformed HTTP request/],
      [`GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, /headers too large/],
    ] as const) {
      const x = await rawExchange(port, [req]);
      expect(x.responses[0]?.status, req.slice(0, 60)).toBe(status);
      expect(isEnvelope(x.responses[0]!)).toBe(true);
      expect(x.responses[0]!.json.error).toMatch(message);
      expect(x.responses[0]!.headers.connection).toBe('close');
    }
    await alive();
  });

  it('an unknown method is the router 405 (with Allow) or 404, in the envelope', async () => {
    const a = await rawExchange(port, [get('FROB /healthz HTTP/1.1')]);
    expect(a.responses[0]).toMatchObject({ status: 405, headers: { allow: 'GET' } });
    expect(a.responses[0]!.json.error).toBe('method FROB not allowed on /healthz; allowed: GET');
    expect(isEnvelope(a.responses[0]!)).toBe(true);
    const b = await rawExchange(port, [get('FROB /nowhere HTTP/1.1')]);
    expect(b.responses[0]?.status).toBe(404);
    expect(isEnvelope(b.responses[0]!)).toBe(true);
    await alive();
  });

  it("Vault's LIST reaches the router as the method LIST, and the connection keeps serving", async () => {
    // /healthz has no LIST route: the router's 405 names LIST, so the method arrived as sent.
    const x = await rawExchange(port, [get('LIST /healthz HTTP/1.1') + get('GET /healthz HTTP/1.1')], { expect: 2 });
    expect(x.responses.map((r) => r.status)).toEqual([405, 200]);
    expect(x.responses[0]!.json.error).toBe('method LIST not allowed on /healthz; allowed: GET');
    expect(isEnvelope(x.responses[0]!)).toBe(true);
    // Two LISTs on one connection, then one with a body.
    const y = await rawExchange(port, [get('LIST /healthz HTTP/1.1') + get('LIST /nowhere HTTP/1.1')], { expect: 2 });
    expect(y.responses.map((r) => r.status)).toEqual([405, 404]);
    expect(y.responses[1]!.json.error).toBe('no route for LIST /nowhere');
    const z = await rawExchange(port, ['LIST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}']);
    expect(z.responses[0]?.status).toBe(405);
    await alive();
  });

  it('a Content-Length over the route cap is 413 from the header alone, and the connection closes', async () => {
    const head = `POST /v1/projects HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n`;
    const x = await rawExchange(port, [head, '{"slug":'], { expect: 2, waitMs: 3_000 });
    expect(x.responses[0]?.status).toBe(413);
    expect(x.responses[0]!.json.error).toMatch(/request body exceeds \d+ bytes/);
    expect(x.responses[0]!.headers.connection).toBe('close');
    expect(x.ms).toBeLessThan(1_000);
    expect(x.closed).toBe(true);
    await alive();
  });

  it('path segments . and .. (also percent-encoded) are 404, never the parent route', async () => {
    const list = await fetch(`${d.url}/v1/projects/${projectId}/secret-maps`, { headers: { authorization: `Bearer ${token}` } });
    expect(list.status).toBe(200);
    for (const seg of ['..', '%2e%2e', '%2E%2e', '.%2e', '.', '%2e']) {
      const x = await rawExchange(port, [`GET /v1/projects/${projectId}/agents/${seg}/secret-maps HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n\r\n`]);
      expect(x.responses[0]?.status, seg).toBe(404);
      expect(isEnvelope(x.responses[0]!)).toBe(true);
    }
    const back = await rawExchange(port, [`GET /v1/projects/${projectId}/agents/x\\..\\..\\secret-maps HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n\r\n`]);
    expect(back.responses[0]?.status).toBe(404);
    await alive();
  });

  it("credentials carry the daemon's own address, whatever the Host header says", async () => {
    const call = (method: string, path: string, body?: unknown) =>
      new Promise<{ status: number; json: any }>((resolve, reject) => {
        const req = request(`${d.url}${path}`, { method, headers: { host: 'evil.example:666', authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, json: text ? JSON.parse(text) : undefined }));
        });
        req.on('error', reject);
        req.end(body === undefined ? undefined : JSON.stringify(body));
      });
    expect((await call('POST', `/v1/projects/${projectId}/secrets`, { name: 'db', value: 'v1' })).status).toBe(201);
    const t = await call('POST', `/v1/projects/${projectId}/secrets/db:issue-token`, {});
    expect(t.status).toBe(200);
    expect(t.json.read.addr).toBe(`${d.url}/vault`);
    expect(JSON.stringify(t.json)).not.toContain('evil.example');
    const v = await call('GET', `/v1/projects/${projectId}/vectordb/credentials`);
    expect(v.status).toBe(200);
    expect(v.json.service_url).toBe(`${d.url}/vectordb`);
  });

  it('slow headers get 408 in the envelope within the headers timeout', async () => {
    const x = await rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: a\r\n'], { waitMs: 5_000 });
    expect(x.responses[0]?.status).toBe(408);
    expect(isEnvelope(x.responses[0]!)).toBe(true);
    expect(x.responses[0]!.json.error).toMatch(/headers must arrive within 1 s/);
    expect(x.ms).toBeLessThan(3_500);
    await alive();
  });

  it('a body that stops arriving is cut at the request timeout', async () => {
    const head = `POST /v1/projects HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"slug":`;
    const x = await rawExchange(port, [head], { expect: 2, waitMs: 6_000 });
    expect(x.closed).toBe(true);
    expect(x.ms).toBeLessThan(4_500);
    expect(x.responses[0]?.status).toBe(408);
    expect(isEnvelope(x.responses[0]!)).toBe(true);
    await alive();
  });

  it('the request timeout bounds receiving the request only: a long response is not cut', async () => {
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const base = `${d.url}/v1/projects/${projectId}/topics`;
    expect((await fetch(base, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'slow' }) })).status).toBeLessThan(300);
    await waitUntil(async () => ((await (await fetch(`${base}/slow`, { headers: auth })).json()) as any).ready === true);
    expect((await fetch(`${base}/slow/subscriptions`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'poll' }) })).status).toBeLessThan(300);
    await waitUntil(async () => ((await (await fetch(`${base}/slow/subscriptions/poll`, { headers: auth })).json()) as any).ready === true);
    // A long poll answers after 3.5 s, longer than the 2 s request timeout.
    const t0 = Date.now();
    const r = await fetch(`${base}/slow/subscriptions/poll:pull`, { method: 'POST', headers: auth, body: JSON.stringify({ timeout_ms: 3_500 }) });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).messages).toEqual([]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3_000);
  });

  it.each([
    ['a JSON body', `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"slug":"ab`, '/v1/projects'],
    [
      'a deploy upload',
      'Content-Type: multipart/form-data; boundary=XX\r\nContent-Length: 100000\r\n\r\n--XX\r\nContent-Disposition: form-data; name="name"\r\n\r\nabc\r\n--XX\r\nContent-Disposition: form-data; name="code"; filename="c.tgz"\r\n\r\nsome bytes',
      '/v1/agents?project=edge',
    ],
  ])('a client that aborts mid-body (%s) is one short log line, not an unhandled error', async (_what, rest, path) => {
    const before = d.stderr().length;
    const head = `POST ${path} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\n${rest}`;
    let sock: Socket | undefined;
    const x = rawExchange(port, [head], { waitMs: 1_000, onSocket: (s) => (sock = s) });
    await new Promise((r) => setTimeout(r, 200));
    sock!.destroy();
    await x;
    await waitUntil(() => /mid-request/.test(d.stderr().slice(before)));
    await new Promise((r) => setTimeout(r, 200));
    const logged = d.stderr().slice(before);
    expect(logged).not.toMatch(/unhandled error|    at /);
    const lines = logged.split('\n').filter((l) => /mid-request/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThan(300);
    // Nothing of a half-received upload is left behind.
    const uploads = join(home, 'builds', 'uploads');
    if (existsSync(uploads)) expect(readdirSync(uploads)).toEqual([]);
    await alive();
  });

  it('connections beyond the cap are closed at once; the daemon serves again when they go', async () => {
    const held: Socket[] = [];
    const opened = Array.from({ length: 16 }, () =>
      rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: a\r\n'], { waitMs: 800, onSocket: (s) => held.push(s) }),
    );
    await new Promise((r) => setTimeout(r, 200));
    const over = await rawExchange(port, [get('GET /healthz HTTP/1.1')], { waitMs: 2_000 });
    expect(over.closed).toBe(true);
    expect(over.responses).toHaveLength(0);
    for (const s of held) s.destroy();
    await Promise.all(opened);
    await waitUntil(async () => (await rawExchange(port, [get('GET /healthz HTTP/1.1')])).responses[0]?.status === 200);
    await alive();
  });
});

async function waitUntil(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
