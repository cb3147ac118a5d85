/**
 * Serverless services benchmarks (issue 19): request throughput and p50/p99 added latency through
 * the Host router against calling the same instance directly (its $PORT), cold start from zero
 * (a source folder as a process, and an image through docker), and create-to-ready. The server
 * is a tiny Node HTTP server. Every instance runs in its own network namespace behind its door
 * (docs/decisions/serverless.md, Isolation), so "directly" is straight to the instance's
 * door.sock (the one door of the state directory while one instance runs), as the router's own
 * pool reaches it. The docker rows run when an engine and the node base image exist,
 * and say why when not.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { Pool, request, type Dispatcher } from 'undici';
import { benchLogin, median, ms, percentile, processCpuMs, ratio, startDaemonProcess, type BenchOptions, type Row, stopDaemonProcess, dockerSkipReason } from './lib.js';

/** Answers every request with its own port; no logging, so the bench measures the path, not stdout. */
const SERVER_JS = `const http = require('node:http');
const port = Number(process.env.PORT);
const body = JSON.stringify({ port, revision: process.env.K_REVISION || '' });
const answer = (res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); };
http.createServer((req, res) => { const ms = Number(new URL(req.url, 'http://x').searchParams.get('ms') || 0); if (ms) setTimeout(() => answer(res), ms); else answer(res); })
  .listen(port, '127.0.0.1', () => console.log('listening on ' + port));
`;
const IDLE_SECONDS = '1';
const CONNECTIONS = 16;

interface Running {
  url: string;
  port: number;
  pid: number;
  home: string;
  token: string;
  project: { id: string; short: string };
}

async function start(env: Record<string, string> = {}): Promise<Running> {
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-svc-'));
  const d = await startDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: IDLE_SECONDS, ...env });
  const token = await benchLogin(d.url);
  const project = (await (await fetch(`${d.url}/v1/projects/default`, { headers: { authorization: `Bearer ${token}` } })).json()) as { id: string; short: string };
  return { url: d.url, port: Number(new URL(d.url).port), pid: d.pid, home, token, project };
}

/** Stops the daemon (it stops its instances) and waits until it has exited. */
const stop = (d: Running) => stopDaemonProcess(d.pid);

async function api(d: Running, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${d.url}/v1/projects/${d.project.id}/services${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${d.token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} services${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function uploadSource(d: Running, files: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-bench-svc-src-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const chunks: Buffer[] = [];
  for await (const c of tarCreate({ cwd: dir, gzip: true, portable: true }, Object.keys(files))) chunks.push(c as Buffer);
  rmSync(dir, { recursive: true, force: true });
  const r = await fetch(`${d.url}/v1/projects/${d.project.id}/services/sources`, {
    method: 'POST',
    headers: { 'content-type': 'application/gzip', authorization: `Bearer ${d.token}` },
    body: new Uint8Array(Buffer.concat(chunks)),
  });
  if (!r.ok) throw new Error(`source upload: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { image: string }).image;
}

/** Polls until the latest created revision serves; a revision that is not_ready fails the bench. */
async function waitReady(d: Running, name: string, timeoutMs = 300_000): Promise<any> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 5))) {
    const s = await api(d, 'GET', `/${name}`);
    if (s.ready && s.latest_ready_revision === s.latest_created_revision) return s;
    if (s.state === 'invalid' || s.state === 'not_ready') {
      const revs = (await api(d, 'GET', `/${name}/revisions`)).revisions as { name: string; state: string; message?: string }[];
      const r = revs.find((x) => x.name === s.latest_created_revision);
      if (r?.state === 'not_ready') throw new Error(`${name} ${r.name} not ready: ${r.message ?? s.message}`);
    }
  }
  throw new Error(`${name} did not become ready`);
}

/** Waits until every instance of the service has stopped (the idle window passed). */
async function waitZero(d: Running, name: string): Promise<void> {
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const m = await api(d, 'GET', `/${name}/metrics`);
    if (m.instances.current === 0) return;
  }
  throw new Error(`${name} did not scale to zero`);
}

const routerTarget = (d: Running, name: string) => ({ origin: `http://127.0.0.1:${d.port}`, host: `${name}-${d.project.short}.apps.localhost:${d.port}` });

/** The newest instance's door socket: requests over it skip the router. */
function doorSocket(d: Running): string {
  const root = join(d.home, 'serverless', 'doors');
  const dirs = readdirSync(root).map((n) => join(root, n)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!dirs.length) throw new Error('no instance door: is the instance isolated?');
  return join(dirs[0]!, 'door.sock');
}

/** A target reached over a unix socket (the door) instead of TCP. */
let door: { socketPath: string; dispatcher: Dispatcher } | undefined;
const DOOR_ORIGIN = 'http://door.local';

async function get(origin: string, host?: string): Promise<string> {
  const r = await request(`${origin}/`, { headers: host ? { host } : {}, ...(origin === DOOR_ORIGIN ? { dispatcher: door!.dispatcher } : {}) });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`${origin} (${host ?? 'direct'}): ${r.statusCode} ${text.slice(0, 200)}`);
  return text;
}

async function latencies(n: number, origin: string, host?: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await get(origin, host);
    out.push(performance.now() - t);
  }
  return out;
}

/** Requests per second over CONNECTIONS keep-alive connections for `durationMs`; answers other than 200 are counted apart. */
async function throughput(durationMs: number, origin: string, host?: string, path = '/'): Promise<{ rps: number; failed: number }> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1, ...(origin === DOOR_ORIGIN ? { socketPath: door!.socketPath } : {}) });
  let done = 0;
  let failed = 0;
  const end = performance.now() + durationMs;
  const worker = async () => {
    while (performance.now() < end) {
      const r = await pool.request({ path, method: 'GET', headers: host ? { host } : {} });
      await r.body.text();
      if (r.statusCode === 200) done++;
      else failed++;
    }
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const rps = done / ((performance.now() - t) / 1000);
  await pool.close();
  return { rps, failed };
}

/** Cold starts: wait for zero, then time the first request through the router. */
async function coldStarts(d: Running, name: string, n: number): Promise<number[]> {
  const { origin, host } = routerTarget(d, name);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    await waitZero(d, name);
    const t = performance.now();
    await get(origin, host);
    out.push(performance.now() - t);
  }
  return out;
}

async function processRows(opts: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const q = opts.quick;
  const throughputMs = q ? 1000 : 3000;
  const d = await start();
  try {
    const image = await uploadSource(d, { 'index.js': SERVER_JS });
    // Create-to-ready of a source folder: the process starts and answers its port.
    const createToReady: number[] = [];
    const nReady = q ? 1 : 3;
    for (let i = 0; i < nReady; i++) {
      const t = performance.now();
      await api(d, 'POST', '', { name: `ready${i}`, image, publish: { enabled: true } });
      await waitReady(d, `ready${i}`);
      createToReady.push(performance.now() - t);
      await api(d, 'DELETE', `/ready${i}`);
    }
    rows.push({ bench: 'serverless', metric: `create-to-ready, source folder as a process, p50 of ${nReady}`, value: ms(median(createToReady)) });

    // One warm instance, so the router and the direct calls reach the same process.
    await api(d, 'POST', '', { name: 'warm', image, publish: { enabled: true }, scaling: { min_scale: 1, max_scale: 1, container_concurrency: 0 } });
    await waitReady(d, 'warm');
    const { origin, host } = routerTarget(d, 'warm');
    await get(origin, host);
    const socketPath = doorSocket(d);
    door = { socketPath, dispatcher: new Pool(DOOR_ORIGIN, { socketPath }) };
    const direct = DOOR_ORIGIN;
    await latencies(q ? 50 : 300, origin, host);
    await latencies(q ? 50 : 300, direct);
    const viaRouter = await latencies(q ? 300 : 2000, origin, host);
    const viaDirect = await latencies(q ? 300 : 2000, direct);
    rows.push({
      bench: 'serverless',
      metric: 'warm request through the router, p50',
      value: ms(median(viaRouter)),
      baseline: `${ms(median(viaDirect))} (the instance's door.sock directly)`,
      ratio: ratio(median(viaRouter), median(viaDirect)),
    });
    rows.push({ bench: 'serverless', metric: 'added latency of the router, p50', value: ms(median(viaRouter) - median(viaDirect)), goal: '< 1 ms' });
    rows.push({ bench: 'serverless', metric: 'added latency of the router, p99', value: ms(percentile(viaRouter, 99) - percentile(viaDirect, 99)) });
    const cpuBefore = processCpuMs(d.pid);
    const viaRouterRps = await throughput(throughputMs, origin, host);
    const cpuAfter = processCpuMs(d.pid);
    const directRps = await throughput(throughputMs, direct);
    const failures = viaRouterRps.failed + directRps.failed ? ` (answers other than 200: ${viaRouterRps.failed} routed, ${directRps.failed} direct)` : '';
    rows.push({
      bench: 'serverless',
      metric: `throughput through the router, ${CONNECTIONS} connections`,
      value: `${viaRouterRps.rps.toFixed(0)} req/s${failures}`,
      baseline: `${directRps.rps.toFixed(0)} req/s direct`,
      ratio: ratio(viaRouterRps.rps, directRps.rps),
      goal: '>= 0.80x',
    });
    if (cpuBefore !== undefined && cpuAfter !== undefined) {
      const served = (viaRouterRps.rps * throughputMs) / 1000;
      // Where the hop's time goes on a small machine: the daemon's one thread per routed request.
      rows.push({ bench: 'serverless', metric: 'daemon CPU per routed request (during the throughput run)', value: ms((cpuAfter - cpuBefore) / served) });
    }
    // The same with a handler that works 5 ms per request, as real ones do: the hop's share shrinks.
    const slowRouter = await throughput(throughputMs, origin, host, '/?ms=5');
    const slowDirect = await throughput(throughputMs, direct, undefined, '/?ms=5');
    rows.push({
      bench: 'serverless',
      metric: `throughput through the router, ${CONNECTIONS} connections, 5 ms handler`,
      value: `${slowRouter.rps.toFixed(0)} req/s`,
      baseline: `${slowDirect.rps.toFixed(0)} req/s direct`,
      ratio: ratio(slowRouter.rps, slowDirect.rps),
    });

    await api(d, 'POST', '', { name: 'cold', image, publish: { enabled: true } });
    await waitReady(d, 'cold');
    await get(origin, routerTarget(d, 'cold').host);
    const nCold = q ? 1 : 5;
    const cold = await coldStarts(d, 'cold', nCold);
    rows.push({ bench: 'serverless', metric: `cold start from zero, process (first request), p50 of ${nCold}`, value: ms(median(cold)), goal: '< 300 ms' });
  } finally {
    await stop(d);
    rmSync(d.home, { recursive: true, force: true });
  }
  return rows;
}

async function dockerRows(opts: BenchOptions): Promise<Row[]> {
  const image = process.env.PLATFORM_DOCKER_IMAGE_NODE || 'platform-node:local';
  const why = opts.quick ? 'quick mode (docker builds and cold starts take minutes)' : await dockerSkipReason(image);
  if (why) return [{ bench: 'serverless', metric: 'cold start and create-to-ready, docker', skipped: why }];
  const rows: Row[] = [];
  const d = await start({ PLATFORM_DRIVER: 'docker' });
  try {
    const spec = { image, command: ['node', '-e', SERVER_JS], publish: { enabled: true } };
    const t = performance.now();
    await api(d, 'POST', '', { name: 'dock', ...spec });
    await waitReady(d, 'dock');
    rows.push({ bench: 'serverless', metric: 'create-to-ready, docker image', value: ms(performance.now() - t) });
    await get(routerTarget(d, 'dock').origin, routerTarget(d, 'dock').host);
    const cold = await coldStarts(d, 'dock', 3);
    rows.push({ bench: 'serverless', metric: 'cold start from zero, docker (first request), p50 of 3', value: ms(median(cold)), goal: '< 1000 ms' });
    // Deleting the service removes its containers.
    await api(d, 'DELETE', '/dock');
  } finally {
    await stop(d);
    rmSync(d.home, { recursive: true, force: true });
  }
  return rows;
}

export async function serverlessBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const rows: Row[] = [];
  for (const part of [processRows, dockerRows]) {
    try {
      rows.push(...(await part(opts)));
    } catch (e) {
      rows.push({ bench: 'serverless', metric: part === processRows ? 'process rows' : 'docker rows', error: (e as Error).message.split('\n')[0]!.slice(0, 160) });
    }
  }
  return rows;
}
