/**
 * Agents and functions benchmarks (issue 3): deploy-to-ready of a python function, cold start
 * from zero, warm invoke through the daemon against calling the shim directly in the same run,
 * and the first NDJSON line of a streaming agent. The docker rows run when an engine and the
 * locally built base image exist, and say why when not.
 */
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { c as tarCreate } from 'tar';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { request } from 'undici';
import { resolvePython, runtimeCommand } from '../src/daemon/runtimes/index.js';
import { BENCH_ADMIN as ADMIN, median, ms, percentile, ratio, startDaemonProcess, type BenchOptions, type Row, dockerSkipReason } from './lib.js';

const root = join(import.meta.dirname, '..');
const FIXTURES = join(root, 'test', 'shims', 'fixtures');
const IDLE_SECONDS = '0.3';
const HELLO = 'def handle(event):\n    return {"reply": "hello " + str(event.get("message"))}\n';

/** A .tar.gz of the given files, as `platform deploy` uploads. */
export async function pack(files: Record<string, string>): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-bench-src-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const chunks: Buffer[] = [];
  for await (const c of tarCreate({ cwd: dir, gzip: true }, Object.keys(files))) chunks.push(c as Buffer);
  rmSync(dir, { recursive: true, force: true });
  return Buffer.concat(chunks);
}

/** The python function shim on a free port with a secret of our own, as the supervisor starts it. */
async function startShim(main: string): Promise<{ port: number; headers: Record<string, string>; stop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-bench-shim-'));
  writeFileSync(join(dir, 'main.py'), main);
  const cmd = runtimeCommand('python', dir, { python: await resolvePython() });
  await cmd.prepare!(dir);
  const port = await new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = srv.address() as { port: number };
      srv.close(() => resolve(p));
    });
  });
  const secret = randomBytes(32).toString('base64url');
  const headers = { 'x-platform-instance-secret': secret };
  const child = spawn(cmd.start.cmd, cmd.start.args, { cwd: dir, env: { ...process.env, ...cmd.start.env, PLATFORM_INSTANCE_SECRET: secret, PORT: String(port) }, stdio: 'ignore' });
  const stop = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    try {
      const r = await request(`http://127.0.0.1:${port}/healthz`, { headers });
      await r.body.dump();
      if (r.statusCode === 200) return { port, headers, stop };
    } catch {
      // not listening yet
    }
  }
  stop();
  throw new Error('the bench shim did not answer /healthz');
}

function tree(dir: string, base = dir, keep: (path: string) => boolean = () => true): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of readdirSync(dir)) {
    if (n === '__pycache__') continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) Object.assign(out, tree(p, base, keep));
    else if (keep(relative(base, p))) out[relative(base, p)] = readFileSync(p, 'utf8');
  }
  return out;
}

export class Daemon {
  constructor(
    readonly url: string,
    readonly pid: number,
    readonly home: string,
    readonly token: string,
  ) {}

  static async start(env: Record<string, string> = {}): Promise<Daemon> {
    const home = mkdtempSync(join(tmpdir(), 'platform-bench-agents-'));
    const d = await startDaemonProcess(home, { INVOKE_AUTH_REQUIRED: 'false', PLATFORM_SCALE_TO_ZERO_SECONDS: IDLE_SECONDS, ...env });
    const login = (await (await fetch(`${d.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()) as { token: string };
    return new Daemon(d.url, d.pid, home, login.token);
  }

  /** Deploys and waits for ready; resolves the milliseconds from upload to ready. */
  async deploy(fields: Record<string, string>, code: Buffer): Promise<number> {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('code', new Blob([new Uint8Array(code)]), 'code.tar.gz');
    const t = performance.now();
    const r = await fetch(`${this.url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${this.token}` } });
    if (r.status !== 202) throw new Error(`deploy ${fields.name}: ${r.status} ${await r.text()}`);
    for (;;) {
      const a = (await (await fetch(`${this.url}/v1/agents/${fields.name}`, { headers: { authorization: `Bearer ${this.token}` } })).json()) as { state: string; message?: string };
      if (a.state === 'ready') return performance.now() - t;
      if (a.state === 'failed') throw new Error(`deploy ${fields.name} failed: ${a.message}`);
      await new Promise((res) => setTimeout(res, 5));
    }
  }

  async invoke(name: string, path = 'invoke'): Promise<void> {
    const r = await request(`${this.url}/v1/agents/${name}/${path}`, { method: 'POST', body: '{"message":"x"}', headers: { 'content-type': 'application/json' } });
    await r.body.dump();
    if (r.statusCode !== 200) throw new Error(`invoke ${name}: ${r.statusCode}`);
  }

  private instances(name: string): { port: number }[] {
    const db = new Database(join(this.home, 'platform.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT i.port FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = ?').all(name) as { port: number }[];
    } finally {
      db.close();
    }
  }

  async port(name: string): Promise<number> {
    await this.invoke(name);
    return this.instances(name)[0]!.port;
  }

  /** Cold starts: wait for scale to zero, then time one invoke; n samples. */
  async coldStarts(name: string, n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      while (this.instances(name).length) await new Promise((r) => setTimeout(r, 20));
      const t = performance.now();
      await this.invoke(name);
      out.push(performance.now() - t);
    }
    return out;
  }

  async stop(): Promise<void> {
    try {
      process.kill(this.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await new Promise((r) => setTimeout(r, 500));
    rmSync(this.home, { recursive: true, force: true });
  }
}

async function timed(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

/** Milliseconds until the first NDJSON chunk of a streaming invoke arrives. */
async function firstLine(url: string): Promise<number> {
  const t = performance.now();
  const r = await request(url, { method: 'POST', body: '{"message":"rain"}', headers: { 'content-type': 'application/json' } });
  let first = 0;
  for await (const _ of r.body) {
    if (!first) first = performance.now() - t;
  }
  return first;
}

export async function agentsBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const rows: Row[] = [];
  const q = opts.quick;
  const d = await Daemon.start();
  try {
    const code = await pack({ 'main.py': HELLO });
    const deploys: number[] = [];
    const nDeploys = q ? 2 : 3;
    for (let i = 0; i < nDeploys; i++) deploys.push(await d.deploy({ name: `fn${i}`, framework: 'function', runtime: 'python' }, code));
    rows.push({ bench: 'agents', metric: `deploy-to-ready, python function, process (median of ${nDeploys})`, value: ms(median(deploys)), goal: '< 2000 ms' });

    const nCold = q ? 3 : 10;
    const cold = await d.coldStarts('fn0', nCold);
    rows.push({ bench: 'agents', metric: `cold start from zero, process, p50 / max of ${nCold}`, value: `${ms(median(cold))} / ${ms(Math.max(...cold))}`, goal: '< 300 ms' });

    // Warm: the same function through the daemon and straight to a shim, interleaved in one run. The
    // daemon's instance answers only requests carrying its secret, so the baseline is the same shim and
    // handler started here with a secret of our own.
    await d.port('fn1');
    const shim = await startShim(HELLO);
    const direct = async () => {
      const r = await request(`http://127.0.0.1:${shim.port}/`, { method: 'POST', body: '{"message":"x"}', headers: { 'content-type': 'application/json', ...shim.headers } });
      await r.body.dump();
    };
    const per = q ? 25 : 50;
    await timed(per, () => d.invoke('fn1'));
    await timed(per, direct);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < (q ? 4 : 10); i++) {
      a.push(...(await timed(per, direct)));
      b.push(...(await timed(per, () => d.invoke('fn1'))));
    }
    const [a50, a99, b50, b99] = [percentile(a, 50), percentile(a, 99), percentile(b, 50), percentile(b, 99)];
    rows.push({ bench: 'agents', metric: 'warm invoke p50 (daemon vs shim)', value: ms(b50), baseline: ms(a50), ratio: ratio(b50, a50), goal: `adds < 1 ms (adds ${(b50 - a50).toFixed(2)} ms)` });
    rows.push({ bench: 'agents', metric: 'warm invoke p99 (daemon vs shim)', value: ms(b99), baseline: ms(a99), ratio: ratio(b99, a99) });
    shim.stop();

    // First NDJSON line of a LangGraph agent (the framework's stand-in travels with the source).
    const graph = { ...tree(join(FIXTURES, 'agent-langgraph')), ...tree(join(FIXTURES, 'fake-frameworks'), join(FIXTURES, 'fake-frameworks'), (p) => p.startsWith('langgraph/')) };
    await d.deploy({ name: 'graph', framework: 'langgraph' }, await pack(graph));
    await d.invoke('graph');
    const lines: number[] = [];
    const nLines = q ? 5 : 20;
    for (let i = 0; i < nLines; i++) lines.push(await firstLine(`${d.url}/v1/agents/graph/invoke/stream`));
    rows.push({ bench: 'agents', metric: `first NDJSON line, warm agent (p50 of ${nLines})`, value: ms(median(lines)) });
  } finally {
    await d.stop();
  }

  const image = process.env.PLATFORM_DOCKER_IMAGE_PYTHON || 'platform-python:local';
  const why = q ? 'quick mode (docker builds and cold starts take minutes)' : await dockerSkipReason(image);
  if (why) {
    rows.push({ bench: 'agents', metric: 'docker driver', skipped: why });
    return rows;
  }
  const dd = await Daemon.start({ PLATFORM_DRIVER: 'docker', PLATFORM_DOCKER_IMAGE_PYTHON: image, PLATFORM_SCALE_TO_ZERO_SECONDS: '1' });
  try {
    const ready = await dd.deploy({ name: 'dock', framework: 'function', runtime: 'python' }, await pack({ 'main.py': HELLO }));
    rows.push({ bench: 'agents', metric: 'deploy-to-ready, python function, docker', value: ms(ready) });
    const cold = await dd.coldStarts('dock', 3);
    rows.push({ bench: 'agents', metric: 'cold start from zero, docker, p50 of 3', value: ms(median(cold)), goal: '< 1000 ms' });
    await fetch(`${dd.url}/v1/agents/dock`, { method: 'DELETE', headers: { authorization: `Bearer ${dd.token}` } });
  } finally {
    await dd.stop();
  }
  return rows;
}
