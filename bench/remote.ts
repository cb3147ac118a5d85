/**
 * Remote platform benchmarks (issue 24): a warm invoke over TLS through a remote context against
 * the same invoke over loopback HTTP (one `platform server start`, whose public listener is https
 * and whose loopback listener is http: same process, same function, same run), and the latency
 * of CLI commands against that remote server against the same commands against a local daemon
 * and against `node -e 0`. A remote context over plain http to the same server separates what
 * TLS (and the undici agent a context's CA needs) adds from what a remote context adds.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiClient } from '../src/client/api-client.js';
import { testCa } from '../test/helpers/test-ca.js';
import { freePort } from '../test/server/helpers.js';
import { BENCH_ADMIN, benchLogin, median, ms, percentile, ratio, samples, startDaemonProcess, stopDaemonProcess, timeIt, type BenchOptions, type Row } from './lib.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const BIN = join(root, 'bin', 'run.js');
const CLI_RUNS = 15;
// Lifted so the bench measures the path, not the throttles.
const UNTHROTTLED = { PLATFORM_SIGNIN_LIMIT_PER_IP: '100000', PLATFORM_SIGNIN_LIMIT_PER_ACCOUNT: '100000', PLATFORM_RATE_LIMIT_BURST: '0' };

/** `platform server start` over TLS on a free port; resolves with both listeners once healthy. */
async function startTlsServer(home: string, cert: string, key: string, caFile: string) {
  const child = spawn(process.execPath, [BIN, 'server', 'start', '--listen', `127.0.0.1:${await freePort()}`, '--tls-cert', cert, '--tls-key', key, '--home', home], {
    env: { ...process.env, PLATFORM_ADMIN_EMAIL: BENCH_ADMIN.email, PLATFORM_ADMIN_PASSWORD: BENCH_ADMIN.password, PLATFORM_SANDBOX_POOL_TARGET: '0', ...UNTHROTTLED },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const locator = join(home, 'daemon.json');
  const ca = readFileSync(caFile, 'utf8');
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    if (child.exitCode !== null) throw new Error(`server start exited ${child.exitCode}`);
    if (!existsSync(locator)) continue;
    try {
      const info = JSON.parse(readFileSync(locator, 'utf8')) as { url: string; public_url?: string; pid: number };
      if (info.pid !== child.pid || !info.public_url) continue;
      await new ApiClient(info.public_url, undefined, { ca }).request('GET', '/healthz', {});
      return { loopback: info.url, public: info.public_url, stop: async () => (child.kill('SIGTERM'), await exited) };
    } catch {
      // not listening yet
    }
  }
  child.kill('SIGKILL');
  throw new Error('server start did not become healthy within 60 s');
}

export async function remoteBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const invokes = opts.quick ? 30 : 200;
  const rows: Row[] = [];
  const work = mkdtempSync(join(tmpdir(), 'platform-bench-remote-'));
  const ca = testCa(work);
  const { cert, key } = ca.issue();
  const server = await startTlsServer(join(work, 'server'), cert, key, ca.caFile);
  let localPid: number | undefined;
  try {
    // The CLI of someone else's machine: its own home, a remote context with the CA, a password sign-in.
    const remoteEnv = { ...process.env, PLATFORM_HOME: join(work, 'cli-remote'), PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1' };
    const cli = (args: string[], input?: string) =>
      new Promise<string>((resolve, reject) => {
        const child = execFile(process.execPath, [BIN, ...args], { env: remoteEnv }, (e, out) => (e ? reject(e) : resolve(out)));
        child.stdin!.end(input ?? '');
      });
    await cli(['context', 'add', 'bench', server.public, '--ca-cert', ca.caFile, '--use']);
    await cli(['login', '--email', BENCH_ADMIN.email, '--password-stdin'], BENCH_ADMIN.password);
    await cli(['projects', 'use', 'default']);
    const fn = join(work, 'hello');
    cpSync(join(root, 'templates', 'function-nodejs'), fn, { recursive: true });
    await cli(['deploy', fn, '--name', 'hello']);

    // Both clients are the CLI's own (undici with a kept-alive agent per CA); only TLS differs.
    const token = await benchLogin(server.loopback);
    const overTls = new ApiClient(server.public, token, { ca: readFileSync(ca.caFile, 'utf8') });
    const overHttp = new ApiClient(server.loopback, token);
    const invoke = (c: ApiClient) => c.request('POST', '/v1/agents/hello/invoke', { query: { project: 'default' }, body: { message: 'bench' }, waitSeconds: 60 }).then((r) => r.json());
    for (let i = 0; i < (opts.quick ? 5 : 20); i++) await Promise.all([invoke(overTls), invoke(overHttp)]);
    // Interleaved, so drift (the other helpers' load on the machine) falls on both alike.
    const tls: number[] = [];
    const http: number[] = [];
    for (let i = 0; i < invokes; i++) {
      tls.push(await timeIt(() => invoke(overTls)));
      http.push(await timeIt(() => invoke(overHttp)));
    }
    rows.push({ bench: 'remote', metric: `warm invoke over TLS p50 / p99 (${invokes})`, value: `${ms(percentile(tls, 50))} / ${ms(percentile(tls, 99))}`, baseline: `loopback http p50 ${ms(percentile(http, 50))}`, ratio: ratio(percentile(tls, 50), percentile(http, 50)) });

    if (opts.quick) {
      // Three CLI homes signed in and a dozen CLI runs take half a minute on a loaded machine.
      rows.push({ bench: 'remote', metric: 'CLI commands over a remote context vs a local daemon and node -e 0', skipped: 'quick mode' });
      return rows;
    }
    // The same commands against a local daemon (the local context, signed in as core.ts does).
    const localHome = join(work, 'cli-local');
    const local = await startDaemonProcess(localHome);
    localPid = local.pid;
    const localEnv = { ...process.env, PLATFORM_HOME: localHome, PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1' };
    await new Promise<void>((resolve, reject) => {
      const child = execFile(process.execPath, [BIN, 'login', '--email', BENCH_ADMIN.email, '--password-stdin'], { env: localEnv }, (e) => (e ? reject(e) : resolve()));
      child.stdin!.end(BENCH_ADMIN.password);
    });
    // The same server through a remote context over plain http (its loopback listener): what TLS
    // and the CA's own undici agent add on top of a remote context.
    const plainEnv = { ...process.env, PLATFORM_HOME: join(work, 'cli-plain'), PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1' };
    await run(process.execPath, [BIN, 'context', 'add', 'plain', server.loopback, '--use'], { env: plainEnv });
    await new Promise<void>((resolve, reject) => {
      const child = execFile(process.execPath, [BIN, 'login', '--email', BENCH_ADMIN.email, '--password-stdin'], { env: plainEnv }, (e) => (e ? reject(e) : resolve()));
      child.stdin!.end(BENCH_ADMIN.password);
    });
    await run(process.execPath, [BIN, 'projects', 'use', 'default'], { env: plainEnv });
    const node = await samples(CLI_RUNS, () => run(process.execPath, ['-e', '0']));
    for (const args of [['whoami', '--json'], ['agents', 'list', '--json']]) {
      const name = `platform ${args.join(' ')}`;
      await run(process.execPath, [BIN, ...args], { env: remoteEnv });
      await run(process.execPath, [BIN, ...args], { env: localEnv });
      await run(process.execPath, [BIN, ...args], { env: plainEnv });
      // Interleaved, as the invokes are: the machine's load drifts over a run.
      const [remote, localRuns, plain] = [[], [], []] as number[][];
      for (let i = 0; i < CLI_RUNS; i++) {
        remote.push(await timeIt(() => run(process.execPath, [BIN, ...args], { env: remoteEnv })));
        localRuns.push(await timeIt(() => run(process.execPath, [BIN, ...args], { env: localEnv })));
        plain.push(await timeIt(() => run(process.execPath, [BIN, ...args], { env: plainEnv })));
      }
      rows.push({ bench: 'remote', metric: `${name}, remote TLS (median)`, value: ms(median(remote)), baseline: `local daemon ${ms(median(localRuns))}`, ratio: ratio(median(remote), median(localRuns)), goal: '~1x (start must not grow)' });
      rows.push({ bench: 'remote', metric: `${name}, remote TLS vs remote http`, value: ms(median(remote)), baseline: `remote http ${ms(median(plain))}`, ratio: ratio(median(remote), median(plain)) });
      rows.push({ bench: 'remote', metric: `${name}, remote TLS vs node -e 0`, value: ms(median(remote)), baseline: `node -e 0 ${ms(median(node))}`, ratio: ratio(median(remote), median(node)) });
    }
  } finally {
    await server.stop();
    if (localPid) await stopDaemonProcess(localPid);
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
