import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { createServer as createPlainServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { PROCESS_ADMIN, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { makeTestCa, tlsProxy, type TestCa } from './tls.js';

/**
 * `context add` against a server behind TLS with a private CA: the server is checked before the
 * context is saved, the CA is kept in the context and trusted by every later request (a stream
 * included), and an untrusted certificate, an unreachable address or a server of another release
 * line are said plainly. The CLI's state directory is not the daemon's.
 */
let work: string;
let daemon: DaemonProcess;
let ca: TestCa;
let front: { server: Server; url: string };
let cli: ReturnType<typeof cliSandbox>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'platform-signin-tls-'));
  ca = makeTestCa(work);
  daemon = await spawnDaemonProcess(join(work, 'server-home'));
  front = await tlsProxy(ca, daemon.url);
  cli = cliSandbox();
}, 60_000);

afterAll(async () => {
  front?.server.close();
  daemon?.child.kill('SIGTERM');
  await daemon?.exited;
  await cli?.stop();
  rmSync(work, { recursive: true, force: true });
});

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);

describe('context add over TLS', () => {
  it('refuses a certificate from an unknown authority with what to do, and saves nothing', async () => {
    const r = await cli.run(['context', 'add', 'team', front.url, '--json']);
    expect(r.exitCode).toBe(1);
    expect(r.json.error).toMatch(/^the server's certificate is not trusted \(.+\): https:\/\/127\.0\.0\.1:\d+ presents a certificate from an authority this machine does not know$/);
    expect(r.json.next).toMatch(/pass --ca-cert FILE with the CA that signed it/);
    noStack(r.stdout + r.stderr);
    expect(() => readFileSync(join(cli.home, 'contexts.json'))).toThrow();
  });

  it('with --ca-cert checks the server, keeps the CA, and later commands trust it', async () => {
    const r = await cli.run(['context', 'add', 'team', front.url, '--ca-cert', ca.caFile, '--use', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ name: 'team', kind: 'remote', url: front.url, custom_ca: true, server_version: expect.any(String), current: true });
    // The CA is embedded: the file can go away.
    const saved = JSON.parse(readFileSync(join(cli.home, 'contexts.json'), 'utf8'));
    expect(saved.contexts.find((c: { name: string }) => c.name === 'team').ca_cert).toBe(readFileSync(ca.caFile, 'utf8'));

    // A remote context never signs in by itself, even with the local bootstrap password in the environment.
    const anonymous = await cli.run(['whoami']);
    expect(anonymous.exitCode).toBe(1);
    expect(anonymous.stderr).toMatch(/not signed in/);
    expect(anonymous.stderr).toMatch(/platform login/);

    const login = await cli.run(['login', '--email', PROCESS_ADMIN.email, '--password-stdin', '--json'], { input: PROCESS_ADMIN.password });
    expect(login.exitCode, login.stderr).toBe(0);
    const me = await cli.run(['whoami', '--json']);
    expect(me.exitCode, me.stderr).toBe(0);
    expect(me.json).toMatchObject({ email: PROCESS_ADMIN.email, context: 'team', url: front.url });
    // Nothing of the server's state directory is in the CLI's.
    expect(cli.home).not.toBe(join(work, 'server-home'));
    expect(() => readFileSync(join(cli.home, 'daemon.json'))).toThrow();
  });

  it('says so when nothing listens at the address, and --no-check saves anyway', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createPlainServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const r = await cli.run(['context', 'add', 'gone', `https://127.0.0.1:${closed}`]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/cannot reach https:\/\/127\.0\.0\.1:\d+: nothing is listening there/);
    noStack(r.stderr);
    const offline = await cli.run(['context', 'add', 'gone', `https://127.0.0.1:${closed}`, '--no-check', '--json']);
    expect(offline.exitCode, offline.stderr).toBe(0);
    expect(offline.json).toMatchObject({ name: 'gone', checked: false });
  });

  it('refuses what is not a platform, and warns about a server of another release line', async () => {
    const impostor = await httpsAnswering(ca, (path) => (path === '/healthz' ? { status: 200, body: { status: 'ok', version: '7.0.0', dependencies: {} } } : { status: 404, body: { error: 'no' } }));
    const notPlatform = await httpsAnswering(ca, () => ({ status: 200, body: { hello: 'world' } }));
    try {
      const newer = await cli.run(['context', 'add', 'newer', impostor.url, '--ca-cert', ca.caFile]);
      expect(newer.exitCode, newer.stderr).toBe(0);
      expect(newer.stderr).toMatch(/warning: the server runs platform 7\.0\.0 and this CLI is \S+: commands may not match/);
      const other = await cli.run(['context', 'add', 'other', notPlatform.url, '--ca-cert', ca.caFile]);
      expect(other.exitCode).toBe(1);
      expect(other.stderr).toMatch(/does not look like a platform server/);
    } finally {
      impostor.server.close();
      notPlatform.server.close();
    }
  });

  it('a usage error for a file that is not a certificate and for a CA with http', async () => {
    const notPemFile = join(work, 'not-a-cert.cnf');
    writeFileSync(notPemFile, 'subjectAltName=IP:127.0.0.1\n');
    const notPem = await cli.run(['context', 'add', 'x', front.url, '--ca-cert', notPemFile]);
    expect(notPem.exitCode).toBe(2);
    expect(notPem.stderr).toMatch(/is not a PEM certificate/);
    const http = await cli.run(['context', 'add', 'x', daemon.url, '--ca-cert', ca.caFile]);
    expect(http.exitCode).toBe(2);
    expect(http.stderr).toMatch(/--ca-cert needs an https URL/);
  });
});

/** A small https server for the version check: answers JSON chosen by path. */
async function httpsAnswering(c: TestCa, answer: (path: string) => { status: number; body: unknown }): Promise<{ server: Server; url: string }> {
  const server = createServer({ key: c.key, cert: c.cert }, (req, res) => {
    const a = answer(req.url ?? '/');
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
