/**
 * The MCP tool runtime as the daemon runs it, without the daemon: a version directory prepared
 * by mcpServerCommand (tools/<tool>.py, tools.json, .platform/), its build step (--check) and
 * its server (--serve) as a real python3 process on a free loopback port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { mcpServerCommand } from '../../src/daemon/runtimes/index.js';

export interface ToolSpec {
  source: string;
  description?: string | null;
  schema?: Record<string, unknown> | null;
  credential_keys?: string[];
}

/** A version directory with the given tool modules (name → source or spec), prepared. */
export async function versionDir(tools: Record<string, string | ToolSpec>, opts: { toolsJson?: boolean } = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-runtime-'));
  mkdirSync(join(dir, 'tools'));
  const entries = Object.entries(tools).sort(([a], [b]) => a.localeCompare(b));
  for (const [name, spec] of entries) writeFileSync(join(dir, 'tools', `${name}.py`), typeof spec === 'string' ? spec : spec.source);
  if (opts.toolsJson !== false) {
    const list = entries.map(([name, spec]) => {
      const s = typeof spec === 'string' ? { source: spec } : spec;
      return { module: name, description: s.description ?? null, schema: s.schema ?? null, credential_keys: s.credential_keys ?? [] };
    });
    writeFileSync(join(dir, 'tools.json'), JSON.stringify({ server: 'test', tools: list }));
  }
  await mcpServerCommand(dir).prepare!(dir);
  return dir;
}

export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });

/** The build step: exit code, stderr and (on success) the manifest. */
export async function check(dir: string, python?: string) {
  const build = mcpServerCommand(dir, { python }).build!;
  const r = await execa(build.cmd, build.args, { cwd: build.cwd, env: build.env, reject: false, timeout: 20_000 });
  let manifest: { tools: Array<{ name: string; module: string; description: string | null; inputSchema: any }> } | undefined;
  if (r.exitCode === 0) manifest = JSON.parse(readFileSync(join(dir, '.platform', 'manifest.json'), 'utf8'));
  return { exitCode: r.exitCode, stderr: r.stderr, stdout: r.stdout, manifest };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export const INSTANCE_SECRET = 'instance-secret-' + 'a'.repeat(32);
export const BEARER = 'svc_mcp_' + '0123456789abcdef'.repeat(4);

export interface Served {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the process wrote so far (its logs). */
  output(): string;
  /** JSON-RPC POST to /mcp with the bearer and the instance secret unless overridden. */
  post(body: unknown, headers?: Record<string, string | undefined>): Promise<{ status: number; headers: Headers; text: string; json: any }>;
  stop(): Promise<void>;
}

/**
 * How the process is started: by default the start command itself; a launcher may wrap it (for
 * example in `docker run`), given the command and the runtime's whole environment.
 */
export type Launcher = (start: { cmd: string; args: string[] }, env: Record<string, string>) => { cmd: string; args: string[]; env: Record<string, string> };

/** Starts --serve on a free port and resolves once it listens (its startup line on stderr). */
export async function serve(dir: string, env: Record<string, string> = {}, opts: { python?: string; launcher?: Launcher } = {}): Promise<Served> {
  const port = await freePort();
  const start = mcpServerCommand(dir, { python: opts.python }).start;
  const runtimeEnv: Record<string, string> = {
    ...start.env,
    PORT: String(port),
    PLATFORM_INSTANCE_SECRET: INSTANCE_SECRET,
    SVC_MCP_AUTH_TOKEN: BEARER,
    MCP_SERVER_NAME: 'test-server',
    MCP_SERVER_VERSION: '7',
    ...env,
  };
  const launched = opts.launcher ? opts.launcher(start, runtimeEnv) : { cmd: start.cmd, args: start.args, env: { PATH: process.env.PATH!, ...runtimeEnv } };
  const child = spawn(launched.cmd, launched.args, {
    cwd: start.cwd,
    env: launched.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = (b: Buffer) => {
      out += b.toString();
      if (/mcp runtime: \d+ tool\(s\) on/.test(out)) resolve();
    };
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`mcp runtime exited ${code} before listening: ${out}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    child,
    output: () => out,
    async post(body, headers = {}) {
      const h: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${BEARER}`,
        'x-platform-instance-secret': INSTANCE_SECRET,
      };
      for (const [k, v] of Object.entries(headers)) {
        if (v === undefined) delete h[k.toLowerCase()];
        else h[k.toLowerCase()] = v;
      }
      const res = await fetch(`${url}/mcp`, { method: 'POST', headers: h, body: typeof body === 'string' ? body : JSON.stringify(body) });
      const text = await res.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A tools/call request body. */
export const callBody = (name: string, args: Record<string, unknown> = {}, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
