import { execa } from 'execa';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, freePort, startServer, stopServer, testCa, type ServerProcess } from './helpers.js';

const ca = testCa();
const first = ca.issue('01A1');
const second = ca.issue('02B2');
// The server reads its certificate from here; the SIGHUP test overwrites these files.
const served = { cert: join(ca.dir, 'served.pem'), key: join(ca.dir, 'served.key') };
copyFileSync(first.cert, served.cert);
copyFileSync(first.key, served.key);
const caPem = readFileSync(ca.caFile);
const cliHome = mkdtempSync(join(tmpdir(), 'platform-server-cli-'));

let server: ServerProcess;
let port: number;

/** GET over https trusting only the test CA; returns the status, the peer's serial and whether the socket was reused. */
function get(path: string, agent: Agent): Promise<{ status: number; serial: string; reused: boolean; socket: TLSSocket }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, ca: caPem, servername: 'localhost' }, (res) => {
      // Read before the end: a kept-alive socket goes back to the agent's pool then.
      const socket = res.socket as TLSSocket;
      const serial = socket.getPeerCertificate().serialNumber;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, serial, reused: req.reusedSocket, socket }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  port = await freePort();
  server = await startServer(['--listen', `0.0.0.0:${port}`, '--tls-cert', served.cert, '--tls-key', served.key, '--public-url', `https://localhost:${port}`]);
});
afterAll(async () => {
  await stopServer(server);
  rmSync(server?.home ?? '', { recursive: true, force: true });
  rmSync(ca.dir, { recursive: true, force: true });
  rmSync(cliHome, { recursive: true, force: true });
});

describe('platform server start over TLS', { timeout: 60_000 }, () => {
  it('refuses a listener on every interface without TLS or a named proxy, with a usage error', async () => {
    const home = mkdtempSync(join(tmpdir(), 'platform-server-refused-'));
    const other = await freePort();
    const r = await execa('node', [BIN, 'server', 'start', '--listen', `0.0.0.0:${other}`, '--home', home], { reject: false, timeout: 30_000 });
    rmSync(home, { recursive: true, force: true });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/refusing to listen on 0\.0\.0\.0:\d+ without TLS/);
    expect(r.stderr).toMatch(/--tls-cert FILE --tls-key FILE.*--behind-proxy CIDR/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    await expect(fetch(`http://127.0.0.1:${other}/healthz`)).rejects.toThrow();
  });

  it('refuses a second daemon on the same state directory', async () => {
    const r = await execa('node', [BIN, 'server', 'start', '--listen', `127.0.0.1:${await freePort()}`, '--home', server.home], { reject: false, timeout: 30_000 });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`a daemon already runs on ${server.home} \\(pid ${server.child.pid}`));
  });

  it('serves https with a certificate from the test CA, and nothing in plain http on that port', async () => {
    const agent = new Agent({ keepAlive: false });
    const r = await get('/healthz', agent);
    expect(r.status).toBe(200);
    expect(r.serial).toBe('01A1');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    // Without the CA the certificate is not trusted.
    await expect(fetch(`https://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('takes a new certificate on SIGHUP while an open keep-alive connection keeps working', async () => {
    const kept = new Agent({ keepAlive: true, maxSockets: 1 });
    const before = await get('/healthz', kept);
    expect(before.serial).toBe('01A1');
    copyFileSync(second.cert, served.cert);
    copyFileSync(second.key, served.key);
    const reloads = (server.stderr().match(/tls certificate reloaded/g) ?? []).length;
    server.child.kill('SIGHUP');
    await server.waitForStderr(new RegExp(`(tls certificate reloaded[^]*){${reloads + 1}}`));
    // The open connection is the same socket, made with the old certificate, and still answers.
    const again = await get('/healthz', kept);
    expect(again.status).toBe(200);
    expect(again.reused).toBe(true);
    expect(again.socket).toBe(before.socket);
    expect(again.serial).toBe('01A1');
    // A new connection gets the new certificate.
    const fresh = await get('/healthz', new Agent({ keepAlive: false }));
    expect(fresh.status).toBe(200);
    expect(fresh.serial).toBe('02B2');
    kept.destroy();
    expect(server.child.exitCode).toBeNull();
  });

  it('creates the first admin once with the printed setup token, through the CLI over TLS, and refuses it afterwards', async () => {
    const token = /setup token: (setup_[A-Za-z0-9_-]+)/.exec(server.stderr())?.[1];
    expect(token).toBeDefined();
    const env = { PLATFORM_HOME: cliHome, PLATFORM_API_URL: `https://localhost:${port}`, NODE_EXTRA_CA_CERTS: ca.caFile, PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1' };
    const cli = (args: string[], input?: string) => execa('node', [BIN, ...args], { env, input, reject: false, timeout: 30_000 });
    // Nobody can sign in before: the server made no admin by itself.
    const early = await cli(['login', '--email', 'admin@platform.local', '--password-stdin'], 'anything-at-all');
    expect(early.exitCode).toBe(1);
    expect(early.stderr).toMatch(/not initialized/);
    const wrong = await cli(['login', '--setup-token', '--email', 'first@example.test'], 'setup_wrong\nFirst-Admin-Pass-1\n');
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toMatch(/invalid setup token/);
    const ok = await cli(['login', '--setup-token', '--email', 'first@example.test', '--json'], `${token}\nFirst-Admin-Pass-1\n`);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ email: 'first@example.test', role: 'admin', setup: true });
    const me = await cli(['whoami', '--json']);
    expect(me.exitCode, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({ email: 'first@example.test', role: 'admin' });
    const again = await cli(['login', '--setup-token', '--email', 'second@example.test'], `${token}\nSecond-Admin-Pass-1\n`);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/already has an admin/);
    const login = await cli(['login', '--email', 'first@example.test', '--password-stdin'], 'First-Admin-Pass-1');
    expect(login.exitCode, login.stderr).toBe(0);
  });
});
