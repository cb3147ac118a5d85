/**
 * MCP server benchmarks (issue 18): publish-to-ready (process and docker drivers), rollback,
 * warm tools/call p50/p99 through the daemon's endpoint against calling the same Python function
 * directly in one process, and tools/list p50. The docker row runs when an engine and the
 * locally built python base image exist, and says why when not.
 */
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { open } from '../src/daemon/crypto/sealed.js';
import { benchLogin, median, ms, percentile, ratio, samples, startDaemonProcess, type BenchOptions, type Row, stopDaemonProcess, dockerSkipReason } from './lib.js';

const ADD = `from platform_mcp import tool

@tool
def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b
`;

interface Running {
  url: string;
  internal: string;
  pid: number;
  home: string;
  token: string;
  project: { id: string; short: string };
}

async function start(env: Record<string, string> = {}): Promise<Running> {
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-mcp-'));
  const d = await startDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600', ...env });
  const internal = (JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8')) as { internal_url: string }).internal_url;
  const token = await benchLogin(d.url);
  const project = (await (await fetch(`${d.url}/v1/projects/default`, { headers: { authorization: `Bearer ${token}` } })).json()) as { id: string; short: string };
  return { url: d.url, internal, pid: d.pid, home, token, project };
}

/** Stops the daemon (it stops its instances) and waits until it has exited. */
const stop = (d: Running) => stopDaemonProcess(d.pid);

const api = async (d: Running, method: string, path: string, body?: unknown) => {
  const r = await fetch(d.url + path, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${d.token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await r.json()) as any;
};

async function waitReady(d: Running, name: string, version: number): Promise<any> {
  for (const end = Date.now() + 300_000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
    const s = (await api(d, 'GET', `/v1/projects/${d.project.id}/mcpservers/${name}`)).mcp_server;
    if (s.version === version && s.state === 'ready') return s;
    if (s.state === 'failed') throw new Error(`${name} failed: ${s.message}`);
  }
  throw new Error(`${name} did not become ready`);
}

/** The server's bearer, opened with the state directory's master key (no API returns it). */
function bearer(d: Running, name: string): string {
  const db = new Database(join(d.home, 'platform.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT id, bearer_sealed FROM mcp_servers WHERE name = ?').get(name) as { id: string; bearer_sealed: string };
    const key = Buffer.from(readFileSync(join(d.home, 'keys', 'secrets-master.key'), 'utf8').trim(), 'base64');
    return open(key, Buffer.from(row.bearer_sealed.slice(5), 'base64'), `mcp:bearer:${row.id}`).toString('utf8');
  } finally {
    db.close();
  }
}

async function publishToReady(d: Running, name: string, n: number): Promise<number[]> {
  await api(d, 'POST', `/v1/projects/${d.project.id}/mcpservers`, { name });
  const out: number[] = [];
  for (let i = 1; i <= n; i++) {
    const t = performance.now();
    // A different module each time: every publish builds (no reused digest).
    await api(d, 'PUT', `/v1/projects/${d.project.id}/mcpservers/${name}/tools/add`, { handler: `${ADD}\n# revision ${i}\n` });
    await waitReady(d, name, i);
    out.push(performance.now() - t);
  }
  return out;
}

/** The same function called in one Python process: the floor the endpoint is compared with. */
function directPython(n: number): number[] {
  const script = `
import time, json
def add(a: int, b: int = 2) -> int:
    return a + b
out = []
for _ in range(${n}):
    t = time.perf_counter(); add(1, 2); out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out))
`;
  return JSON.parse(execFileSync('python3', ['-c', script], { encoding: 'utf8' })) as number[];
}

export async function mcpBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const rows: Row[] = [];
  const q = opts.quick;
  const d = await start();
  try {
    const versions = q ? 2 : 5;
    const publish = await publishToReady(d, 'bench', versions);
    rows.push({ bench: 'mcp', metric: `publish-to-ready, process driver, p50 of ${versions}`, value: ms(median(publish)), goal: '< 2000 ms' });
    const base = `/v1/projects/${d.project.id}/mcpservers/bench`;
    const nRollback = q ? 5 : 20;
    const rollback = await samples(nRollback, () => api(d, 'POST', `${base}/versions/${1 + Math.floor(Math.random() * (versions - 1))}:rollback`));
    rows.push({ bench: 'mcp', metric: `rollback (no build), p50 of ${nRollback}`, value: ms(median(rollback)), goal: '< 300 ms' });
    await api(d, 'POST', `${base}/versions/${versions}:rollback`);
    const url = `${d.internal}/mcp/${d.project.short}/bench/mcp`;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${bearer(d, 'bench')}` };
    const rpc = (method: string, params?: unknown) => async () => {
      const r = await request(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      await r.body.text();
    };
    const call = rpc('tools/call', { name: 'add', arguments: { a: 1, b: 2 } });
    await samples(q ? 50 : 200, call);
    const warm = await samples(q ? 300 : 2000, call);
    const direct = directPython(q ? 300 : 2000);
    rows.push({
      bench: 'mcp',
      metric: 'warm tools/call through the endpoint, p50',
      value: ms(median(warm)),
      baseline: `${median(direct).toFixed(4)} ms (function called in one python process)`,
      ratio: ratio(median(warm), median(direct)),
      goal: '< 2 ms',
    });
    rows.push({ bench: 'mcp', metric: 'warm tools/call through the endpoint, p99', value: ms(percentile(warm, 99)) });
    const list = await samples(q ? 100 : 1000, rpc('tools/list'));
    rows.push({ bench: 'mcp', metric: 'tools/list through the endpoint, p50', value: ms(median(list)) });
  } finally {
    await stop(d);
    rmSync(d.home, { recursive: true, force: true });
  }
  const image = process.env.PLATFORM_DOCKER_IMAGE_PYTHON || 'platform-python:local';
  const why = q ? 'quick mode (docker builds and cold starts take minutes)' : await dockerSkipReason(image);
  if (why) {
    rows.push({ bench: 'mcp', metric: 'publish-to-ready, docker driver', skipped: why });
    return rows;
  }
  const dd = await start({ PLATFORM_DRIVER: 'docker', PLATFORM_DOCKER_IMAGE_PYTHON: image });
  try {
    const publish = await publishToReady(dd, 'benchdock', 3);
    rows.push({ bench: 'mcp', metric: 'publish-to-ready, docker driver, p50 of 3', value: ms(median(publish)) });
    // Deleting the server removes its images.
    await api(dd, 'DELETE', `/v1/projects/${dd.project.id}/mcpservers/benchdock`);
  } finally {
    await stop(dd);
    rmSync(dd.home, { recursive: true, force: true });
  }
  return rows;
}
