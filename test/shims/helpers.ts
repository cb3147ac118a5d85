import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandSpec, WorkloadCommand } from '../../src/daemon/runtimes/index.js';

export const FIXTURES = join(import.meta.dirname, 'fixtures');

/** A free port on 127.0.0.1 (the workload binds it right after, as the daemon's allocator does). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function run(spec: CommandSpec, extraEnv: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(spec.cmd, spec.args, { cwd: spec.cwd, env: { ...process.env, ...spec.env, ...extraEnv }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** A workload process started the way the daemon's process driver starts it. */
export interface RunningWorkload {
  url: string;
  port: number;
  /** The instance secret it was started with, as the daemon's supervisor does. */
  secret: string;
  /** The header that carries it: every request the daemon makes sends it. */
  headers: Record<string, string>;
  dir: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Waits for the next `EVENT <json>` line the sample handler prints, and parses it. */
  takeEvent(timeoutMs?: number): Promise<unknown>;
  stop(): Promise<void>;
}

/**
 * Copies a sample handler into a fresh workload dir, runs prepare and build from the runtime's
 * command, starts it on a free port and waits for /healthz.
 */
export async function startWorkload(
  fixture: string,
  command: (dir: string) => WorkloadCommand,
  env: Record<string, string> = {},
  opts: { skipBuild?: boolean } = {},
): Promise<RunningWorkload> {
  const dir = mkdtempSync(join(tmpdir(), 'shim-'));
  cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  const cmd = command(dir);
  await cmd.prepare?.(dir);
  if (cmd.build && !opts.skipBuild) {
    const built = await run(cmd.build, env);
    if (built.code !== 0) throw new Error(`build failed (${built.code}):\n${built.output}`);
  }
  const port = await freePort();
  const secret = randomBytes(32).toString('base64url');
  const headers = { [SECRET_HEADER]: secret };
  const child = spawn(cmd.start.cmd, cmd.start.args, {
    cwd: cmd.start.cwd ?? dir,
    env: { ...process.env, ...cmd.start.env, ...env, PLATFORM_INSTANCE_SECRET: secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let consumed = 0;
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`workload exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(`${url}/healthz`, { headers });
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`workload did not answer /healthz:\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url,
    port,
    secret,
    headers,
    dir,
    child,
    output: () => out,
    async takeEvent(timeoutMs = 15_000) { // generous: an 8 MiB line through a pipe on a busy machine
      const end = Date.now() + timeoutMs;
      for (;;) {
        const rest = out.slice(consumed);
        const m = /^EVENT (.*)\r?\n/m.exec(rest); // whole lines only: a big one arrives in pieces
        if (m) {
          consumed += m.index + m[0].length;
          return JSON.parse(m[1]!);
        }
        if (Date.now() > end) throw new Error(`no EVENT line from the handler; output:\n${out}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: string;
  body: string;
}

/**
 * Sends bytes as they are (fetch cannot send a malformed Content-Length) and reads the reply
 * until the server closes or (unless untilClose) the first response's declared body arrived.
 */
export function rawRequest(port: number, request: string, opts: { untilClose?: boolean; secret?: string } = {}): Promise<RawResponse> {
  if (opts.secret !== undefined) request = withSecret(request, opts.secret);
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let data = '';
    const finish = () => {
      const at = data.indexOf('\r\n\r\n');
      const head = at < 0 ? data : data.slice(0, at);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, headers: head, body: at < 0 ? '' : data.slice(at + 4) });
    };
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => {
      data += c;
      const at = data.indexOf('\r\n\r\n');
      const len = /\r\ncontent-length:\s*(\d+)/i.exec(data.slice(0, at))?.[1];
      if (!opts.untilClose && at >= 0 && len !== undefined && data.length - at - 4 >= Number(len)) {
        sock.destroy();
        finish();
      }
    });
    sock.on('end', finish);
    sock.on('error', (err) => (data ? finish() : reject(err)));
    sock.write(request);
  });
}

export const SECRET_HEADER = 'x-platform-instance-secret';

/** Adds the instance secret header to every request head in raw bytes (after each request line). */
export function withSecret(request: string, secret: string): string {
  return request.replace(/ HTTP\/1\.1\r\n/g, ` HTTP/1.1\r\n${SECRET_HEADER}: ${secret}\r\n`);
}

export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
