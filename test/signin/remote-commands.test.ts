import { execa } from 'execa';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { PROCESS_ADMIN, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { makeTestCa, tlsProxy } from './tls.js';

/**
 * Commands work unchanged against a remote context over TLS with its own CA: a deploy uploads
 * (multipart) and follows its build, a streamed invoke and `logs -f` stream through it. The
 * CLI's state directory is its own; it never reads the server's.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
let work: string;
let daemon: DaemonProcess;
let front: { server: Server; url: string };
let cli: ReturnType<typeof cliSandbox>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'platform-signin-remote-'));
  const ca = makeTestCa(work);
  daemon = await spawnDaemonProcess(join(work, 'server-home'));
  front = await tlsProxy(ca, daemon.url);
  cli = cliSandbox();
  expect((await cli.run(['context', 'add', 'team', front.url, '--ca-cert', ca.caFile, '--use'])).exitCode).toBe(0);
  const login = await cli.run(['login', '--email', PROCESS_ADMIN.email, '--password-stdin'], { input: PROCESS_ADMIN.password });
  expect(login.exitCode, login.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  front?.server.close();
  daemon?.child.kill('SIGTERM');
  await daemon?.exited;
  await cli?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('a remote context over TLS', () => {
  it('deploys, invokes, streams an invoke and follows logs', async () => {
    const dir = join(work, 'hello');
    cpSync(join(import.meta.dirname, '..', '..', 'templates', 'function-nodejs'), dir, { recursive: true });
    const deploy = await cli.run(['deploy', dir, '--name', 'hello', '--json']);
    expect(deploy.exitCode, deploy.stderr + deploy.stdout).toBe(0);

    const invoke = await cli.run(['invoke', 'hello', '-m', 'tls', '--json']);
    expect(invoke.exitCode, invoke.stderr).toBe(0);
    expect(invoke.json.reply).toBe('hello tls');

    const streamed = await cli.run(['invoke', 'hello', '-m', 'stream', '--stream']);
    expect(streamed.exitCode, streamed.stderr).toBe(0);
    expect(streamed.stdout).toMatch(/hello stream/);

    const follow = execa('node', [BIN, 'logs', 'hello', '-f'], { env: cli.env, extendEnv: true, reject: false, stdin: 'ignore' });
    let seen = '';
    const followed = new Promise<void>((resolve) =>
      follow.stdout!.on('data', (b: Buffer) => {
        seen += b.toString();
        if (seen.includes('greeting followed')) resolve();
      }),
    );
    // Lines logged after the follow began reach it through the proxy.
    await expect.poll(async () => {
      await cli.run(['invoke', 'hello', '-m', 'followed']);
      return seen.includes('greeting followed');
    }, { timeout: 30_000, interval: 1000 }).toBe(true);
    await followed;
    follow.kill('SIGTERM');
    await follow;
  });
});
