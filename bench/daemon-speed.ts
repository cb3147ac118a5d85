/**
 * Daemon speed (issue 26): start to a healthy /healthz with an empty state and with 100 agents, 50
 * indexes and 20 caches recorded (and how long until they are all back), RSS at rest and after the
 * first use of each area, and the invoke overhead through the daemon at 1 and 32 concurrent
 * callers against calling the very same instance directly, next to the floor (a bare node
 * reverse proxy in front of the same instance, bench/floor-proxy.mjs). `BENCH_BASE_DAEMON` names
 * another build's daemon bundle to measure the same rows on it in the same run (before/after),
 * `BENCH_BASE_DAEMON_NODE_ARGS` node flags for that daemon alone.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { pack } from './agents.js';
import { BENCH_ADMIN as ADMIN, median, ms, percentile, ratio, startDaemonProcess, type BenchOptions, type Row } from './lib.js';

const HELLO = 'def handle(event):\n    return {"reply": "hello " + str(event.get("message"))}\n';
export const SEED = { agents: 100, indexes: 50, caches: 20 };

type Api = (method: string, path: string, body?: unknown) => Promise<any>;

function apiOf(url: string, token?: string): Api {
  return async (method, path, body) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) : undefined;
  };
}

async function signIn(url: string): Promise<{ token: string; api: Api; projectId: string }> {
  const { token } = await apiOf(url)('POST', '/v1/auth/login', ADMIN);
  const api = apiOf(url, token);
  const project = (await api('GET', '/v1/projects')).projects.find((p: { slug: string }) => p.slug === 'default');
  return { token, api, projectId: project.id };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` over `items` with at most `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: n }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
  }));
}

/** Records the seeded state through the API of a running daemon: every agent built, every cache up, every index ready. */
const PER_PROJECT = 12;

export async function seed(url: string, counts = SEED): Promise<void> {
  const { token, api, projectId } = await signIn(url);
  const code = await pack({ 'main.py': HELLO });
  // A project holds at most 30 services, and 13 running medium instances (cpu_limits 20 at 1.5 CPU
  // with the proxy, spec 1 §8.3): the agents are spread over projects of PER_PROJECT.
  const projects: string[] = [];
  for (let i = 0; i < Math.ceil(counts.agents / PER_PROJECT); i++) {
    projects.push(i === 0 ? 'default' : (await api('POST', '/v1/projects', { slug: `seed-${i}` })).project.slug);
  }
  const deploy = async (name: string) => {
    const project = projects[Math.floor(Number(name.split('-').pop()) / PER_PROJECT)]!;
    const form = new FormData();
    form.append('name', name);
    form.append('framework', 'function');
    form.append('runtime', 'python');
    form.append('code', new Blob([new Uint8Array(code)]), 'code.tar.gz');
    const r = await fetch(`${url}/v1/agents?project=${project}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
    if (r.status !== 202) throw new Error(`deploy ${name}: ${r.status} ${await r.text()}`);
  };
  await pool(Array.from({ length: counts.agents }, (_, i) => `seed-fn-${i}`), 4, deploy);
  await pool(Array.from({ length: counts.indexes }, (_, i) => `seed-idx-${i}`), 4, async (name) => {
    await api('POST', `/v1/projects/${projectId}/indexes`, { name, dimensions: 8, distance: 'cosine' });
    await api('POST', `/v1/projects/${projectId}/indexes/${name}:upsert`, { points: [{ id: 1, vector: [1, 0, 0, 0, 0, 0, 0, 0] }] }).catch(() => undefined);
  });
  await pool(Array.from({ length: counts.caches }, (_, i) => `seed-cache-${i}`), 4, async (name) => {
    await api('POST', `/v1/projects/${projectId}/memorystores`, { name });
  });
  // Everything settled before the restart is timed: builds done, servers up, indexes ready.
  for (const deadline = Date.now() + 600_000; Date.now() < deadline; await sleep(200)) {
    const agents: { state: string }[] = [];
    for (let page = ''; ; ) {
      const r = await api('GET', `/v1/agents?page_size=100${page ? `&page_token=${page}` : ''}`);
      agents.push(...r.agents);
      if (!r.next_page_token) break;
      page = r.next_page_token;
    }
    const caches = (await api('GET', `/v1/projects/${projectId}/memorystores`)).memorystores as { ready: boolean }[] | undefined;
    const agentsDone = agents.filter((a) => a.state === 'ready' || a.state === 'failed').length;
    const cachesUp = (caches ?? []).filter((c) => c.ready).length;
    if (agentsDone >= counts.agents && cachesUp >= counts.caches) return;
  }
  throw new Error('the seeded state did not settle within 10 minutes');
}

interface Started {
  url: string;
  pid: number;
  ms: number;
}

async function stopDaemon(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  // The next start needs the state directory free (its lock and locator).
  for (let i = 0; i < 400; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(25);
  }
}

/** Start to healthy (and the daemon's CPU by then), and until /healthz says every area started and every workload is back. */
async function timedStart(home: string, main?: string): Promise<Started & { cpuMs: number; backMs: number; backOk: boolean }> {
  const d = await startDaemonProcess(home, {}, main);
  // Read at once: the areas go on starting behind the listener.
  const cpu = cpuMs(d.pid);
  const t = performance.now() - d.ms;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(5)) {
    const h = (await (await fetch(`${d.url}/healthz`)).json()) as { reconciliation?: { state: string } };
    // A daemon before issue 26 has nothing to reconcile after listening.
    if (!h.reconciliation || h.reconciliation.state === 'done') return { ...d, cpuMs: cpu, backMs: performance.now() - t, backOk: true };
  }
  return { ...d, cpuMs: cpu, backMs: performance.now() - t, backOk: false };
}

interface Restarts {
  start: number;
  back: number;
  cpu: number;
}

/**
 * Medians of `n` restarts of the daemon on the same state, for this build and (when given) the
 * base build, alternated start by start so both see the same moments of a shared machine.
 */
async function restarts(home: string, n: number, base?: string): Promise<{ after: Restarts; before?: Restarts }> {
  const builds = base ? [undefined, base] : [undefined];
  const runs = builds.map(() => ({ starts: [] as number[], backs: [] as number[], cpus: [] as number[] }));
  for (let i = 0; i < n; i++) {
    // Each build goes first in every other round.
    for (const b of i % 2 ? [...builds.keys()].reverse() : builds.keys()) {
      const d = await timedStart(home, builds[b]);
      runs[b]!.starts.push(d.ms);
      runs[b]!.backs.push(d.backMs);
      runs[b]!.cpus.push(d.cpuMs);
      await stopDaemon(d.pid);
    }
  }
  const [after, before] = runs.map((r) => ({ start: median(r.starts), back: median(r.backs), cpu: median(r.cpus) }));
  return { after: after!, before };
}

/** Resident set of a process from /proc, in MiB. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export async function startRows(opts: { quick?: boolean } = {}): Promise<Row[]> {
  const rows: Row[] = [];
  const base = process.env.BENCH_BASE_DAEMON;
  // Restarts are cheap and a shared machine is noisy: 11 per build in a full run.
  const n = opts.quick ? 3 : 11;
  // Floors in the same run: node starting and exiting, and node answering one HTTP request.
  const floor = async (script: string) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await new Promise<void>((resolve, reject) => {
        const c = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
        c.once('exit', () => resolve());
        c.once('error', reject);
      });
      xs.push(performance.now() - t);
    }
    return median(xs);
  };
  const nodeFloor = await floor('0');
  const httpFloor = await floor("const s=require('http').createServer((q,r)=>r.end('ok')).listen(0,'127.0.0.1',()=>fetch('http://127.0.0.1:'+s.address().port+'/').then(r=>r.text()).then(()=>process.exit(0)))");
  rows.push({ bench: 'daemon', metric: 'floor: node -e 0 / node listening and answering one fetch', value: `${ms(nodeFloor)} / ${ms(httpFloor)}` });
  const empty = mkdtempSync(join(tmpdir(), 'platform-bench-start-'));
  // A first start of each build on this state (its code cache written, for a build that keeps one).
  for (const main of base ? [undefined, base] : [undefined]) await stopDaemon((await startDaemonProcess(empty, {}, main)).pid);
  const { after: e, before: eb } = await restarts(empty, n, base);
  const before = (b: number | undefined) => (b === undefined ? {} : { baseline: `before ${ms(b)}`, baselineFigure: b });
  rows.push({ bench: 'daemon', metric: `start to healthy, empty state (median of ${n})`, figure: e.start, unit: 'ms', ...before(eb?.start), goal: { max: 200, strict: true, unit: 'ms' } });
  rows.push({ bench: 'daemon', metric: `daemon CPU until healthy, empty state (median of ${n})`, figure: e.cpu, unit: 'ms', ...before(eb?.cpu) });

  const home = mkdtempSync(join(tmpdir(), 'platform-bench-seeded-'));
  const seeding = await startDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '1' });
  // Seeding the full state (100 builds) takes minutes: quick mode seeds a few of each, which says
  // nothing about the goal, so its row shows the goal without a verdict.
  const counts = opts.quick ? { agents: 2, indexes: 2, caches: 1 } : SEED;
  try {
    await seed(seeding.url, counts);
  } finally {
    await stopDaemon(seeding.pid);
  }
  // Without a verdict in quick mode (above), two restarts are enough for a smoke run.
  const nSeeded = opts.quick ? 2 : n;
  const { after: s, before: sb } = await restarts(home, nSeeded, base);
  const what = `${counts.agents} agents, ${counts.indexes} indexes, ${counts.caches} caches`;
  const seededGoal = opts.quick ? `< 500 ms at ${SEED.agents} agents, ${SEED.indexes} indexes, ${SEED.caches} caches (full run)` : { max: 500, strict: true, unit: 'ms' };
  rows.push({ bench: 'daemon', metric: `start to healthy, ${what} (median of ${nSeeded})`, figure: s.start, unit: 'ms', ...before(sb?.start), goal: seededGoal });
  rows.push({ bench: 'daemon', metric: `start until every workload is back, ${what}`, figure: s.back, unit: 'ms', ...before(sb?.back) });
  rmSync(empty, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  return rows;
}

/** The instance's own port and secret, to call it directly (the daemon adds only its hop then). */
function instanceOf(home: string, name: string): { port: number; secret: string; pid: number } {
  const db = new Database(join(home, 'platform.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT i.port, i.pid FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = ?').get(name) as { port: number; pid: number };
    // The supervisor hands the instance its secret in its environment; this user can read it.
    const env = readFileSync(`/proc/${row.pid}/environ`, 'utf8').split('\0');
    const secret = env.find((v) => v.startsWith('PLATFORM_INSTANCE_SECRET='))?.slice('PLATFORM_INSTANCE_SECRET='.length);
    if (!secret) throw new Error('the instance secret is not in its environment');
    return { port: row.port, secret, pid: row.pid };
  } finally {
    db.close();
  }
}

/** CPU time (user + system) a process has used so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU time (run time on a CPU, nanosecond resolution, in ms) of each thread of a process and,
 * when `below`, of every process below it: an instance runs its handler in a child of the process
 * the daemon recorded (its sandbox's wrapper); the daemon's own children (instances, cache servers)
 * are not the daemon's CPU. Keyed by thread, so `cpuSince` counts only threads alive at both
 * reads: a thread or process that ended meanwhile (the vector area's graph worker) would
 * otherwise take its whole past off the sum.
 */
function cpuSnapshot(pid: number, below: boolean): Map<string, number> {
  const children = new Map<number, number[]>();
  if (below) {
    for (const e of readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      try {
        const ppid = Number(readFileSync(`/proc/${e}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
        children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
      } catch {
        // gone meanwhile
      }
    }
  }
  const out = new Map<string, number>();
  for (const stack = [pid]; stack.length; ) {
    const p = stack.pop()!;
    try {
      for (const t of readdirSync(`/proc/${p}/task`)) out.set(`${p}/${t}`, Number(readFileSync(`/proc/${p}/task/${t}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
    } catch {
      // gone meanwhile
    }
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

function cpuSince(before: Map<string, number>, pid: number, below: boolean): number {
  let ms = 0;
  for (const [k, v] of cpuSnapshot(pid, below)) if (before.has(k)) ms += v - before.get(k)!;
  return ms;
}

/** Latencies of `total` calls made by `callers` concurrent callers. */
async function concurrent(callers: number, total: number, call: () => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  let left = total;
  await Promise.all(Array.from({ length: callers }, async () => {
    while (left-- > 0) {
      const t = performance.now();
      await call();
      out.push(performance.now() - t);
    }
  }));
  return out;
}

/** One daemon of the invoke rows: its RSS rows, a warm function, and the paths to call it through the daemon and directly. */
interface InvokeTarget {
  label: string;
  pid: number;
  home: string;
  /** The instance's process (for its CPU) and the paths: through the daemon, straight to the instance. */
  inst: { port: number; secret: string; pid: number };
  viaDaemon: () => Promise<void>;
  straight: () => Promise<void>;
  close: () => Promise<void>;
}

const INVOKE_BODY = '{"message":"x"}';

/** Calls `url` with the bench's invoke body on a keep-alive pool of 64 connections; throws on any status but 200. */
function caller(url: string, headers: Record<string, string>): { call: () => Promise<void>; close: () => Promise<void> } {
  const pool = new Agent({ connections: 64, pipelining: 1 });
  return {
    call: async () => {
      const r = await request(url, { dispatcher: pool, method: 'POST', body: INVOKE_BODY, headers: { 'content-type': 'application/json', ...headers } });
      await r.body.dump();
      if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode}`);
    },
    close: () => pool.close(),
  };
}

/** Starts a daemon (this build, or `main` of another), records its RSS rows, deploys the function and warms it. */
async function invokeTarget(rows: Row[], opts: { quick?: boolean; main?: string; label: string; nodeArgs?: string[] }): Promise<InvokeTarget> {
  const suffix = opts.label ? ` ${opts.label}` : '';
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-invoke-'));
  const d = await startDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600' }, opts.main, opts.nodeArgs);
  try {
    await sleep(opts.quick ? 1_000 : 2_000);
    const rest = rssMiB(d.pid);
    rows.push({ bench: 'daemon', metric: `RSS at rest, nothing deployed${suffix}`, figure: rest, unit: 'MiB', goal: { max: 80, strict: true, unit: 'MiB' } });
    const { token, api, projectId } = await signIn(d.url);
    // What each area costs the daemon once used: RSS after its first use, over the step before.
    let last = rssMiB(d.pid);
    const used = async (area: string, use: () => Promise<unknown>) => {
      await use();
      await sleep(opts.quick ? 200 : 500);
      const now = rssMiB(d.pid);
      rows.push({ bench: 'daemon', metric: `RSS after first use: ${area}${suffix}`, value: `${now.toFixed(1)} MiB`, baseline: `+${(now - last).toFixed(1)} MiB` });
      last = now;
    };
    await used('accounts (sign-in, list projects)', () => api('GET', '/v1/projects'));
    await used('metrics (first scrape loads prom-client)', () => fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text()));
    await used('vector (index, upsert, query)', async () => {
      await api('POST', `/v1/projects/${projectId}/indexes`, { name: 'rss', dimensions: 8, distance: 'cosine' });
      for (let i = 0; i < 200 && !(await api('GET', `/v1/projects/${projectId}/indexes/rss`)).index.ready; i++) await sleep(10);
      await api('POST', `/v1/projects/${projectId}/indexes/rss:upsert`, { points: [{ id: 1, vector: [1, 0, 0, 0, 0, 0, 0, 0] }] });
      await api('POST', `/v1/projects/${projectId}/indexes/rss:query`, { vector: [1, 0, 0, 0, 0, 0, 0, 0], top_k: 1 });
    });
    await used('cache (one instance, server is its own process)', async () => {
      await api('POST', `/v1/projects/${projectId}/memorystores`, { name: 'rss' });
      for (let i = 0; i < 500 && !(await api('GET', `/v1/projects/${projectId}/memorystores/rss`)).ready; i++) await sleep(20);
    });
    await used('agents (deploy, first invoke loads undici)', async () => {
      await seed(d.url, { agents: 1, indexes: 0, caches: 0 });
      await fetch(`${d.url}/v1/agents/seed-fn-0/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' }).then((r) => r.text());
    });
    const through = caller(`${d.url}/v1/agents/seed-fn-0/invoke`, { authorization: `Bearer ${token}` });
    await through.call();
    const inst = instanceOf(home, 'seed-fn-0');
    const direct = caller(`http://127.0.0.1:${inst.port}/`, { 'x-platform-instance-secret': inst.secret });
    return {
      label: opts.label,
      pid: d.pid,
      home,
      inst,
      viaDaemon: through.call,
      straight: direct.call,
      close: async () => {
        await through.close();
        await direct.close();
        await stopDaemon(d.pid);
        rmSync(home, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await stopDaemon(d.pid);
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
}

/** The bare node reverse proxy of bench/floor-proxy.mjs in front of an instance, as its own process. */
async function floorProxy(inst: { port: number; secret: string }): Promise<{ pid: number; call: () => Promise<void>; close: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'floor-proxy.mjs')], {
    env: { ...process.env, FLOOR_UPSTREAM: `http://127.0.0.1:${inst.port}/`, FLOOR_SECRET: inst.secret },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    child.once('exit', (code) => reject(new Error(`the floor proxy exited with ${code}`)));
  });
  const c = caller(`http://127.0.0.1:${port}/`, {});
  return {
    pid: child.pid!,
    call: c.call,
    close: async () => {
      await c.close();
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/**
 * Invoke overhead: a warm invoke with a session token through the daemon against the very same
 * instance called directly, at 1 and 32 callers, next to the floor (a bare node proxy in front of
 * the same instance) and, with `BENCH_BASE_DAEMON`, the base build's daemon. Every path runs its
 * share of each round in turn, so load from elsewhere on the machine falls on all of them alike;
 * CPU per invoke is read from /proc the same way, in alternated chunks.
 */
export async function invokeRows(opts: { quick?: boolean; base?: string; baseNodeArgs?: string[] } = {}): Promise<Row[]> {
  const rows: Row[] = [];
  const targets: InvokeTarget[] = [];
  let floor: Awaited<ReturnType<typeof floorProxy>> | undefined;
  const load0 = loadavg()[0]!;
  try {
    targets.push(await invokeTarget(rows, { quick: opts.quick, label: '' }));
    if (opts.base) targets.push(await invokeTarget(rows, { quick: opts.quick, main: opts.base, label: '(before)', nodeArgs: opts.baseNodeArgs }));
    const main = targets[0]!;
    floor = await floorProxy(main.inst);
    const per = opts.quick ? 100 : 500;
    const warm = opts.quick ? 50 : 200;
    for (const callers of [1, 32]) {
      const who = `${callers} caller${callers > 1 ? 's' : ''}`;
      const paths = [
        ...targets.flatMap((t) => [
          { name: `direct${t.label}`, call: t.straight, pid: t.inst.pid, below: true },
          { name: `daemon${t.label}`, call: t.viaDaemon, pid: t.pid, below: false },
        ]),
        { name: 'floor', call: floor.call, pid: floor.pid, below: false },
      ];
      for (const p of paths) await concurrent(callers, warm, p.call);
      const lat = new Map<string, number[]>(paths.map((p) => [p.name, []]));
      for (let round = 0; round < 5; round++) {
        for (const p of round % 2 ? [...paths].reverse() : paths) lat.get(p.name)!.push(...(await concurrent(callers, per / 5, p.call)));
      }
      // CPU per call of each process on its own path (the daemon's, the floor proxy's, the instance's), in alternated chunks.
      const n = opts.quick ? 100 : 2000;
      const cpu = new Map<string, number>(paths.map((p) => [p.name, 0]));
      for (let chunk = 0; chunk < 4; chunk++) {
        for (const p of chunk % 2 ? [...paths].reverse() : paths) {
          const c0 = cpuSnapshot(p.pid, p.below);
          await concurrent(callers, n / 4, p.call);
          cpu.set(p.name, cpu.get(p.name)! + cpuSince(c0, p.pid, p.below));
        }
      }
      const cpuPer = (name: string) => ((cpu.get(name)! / n) * 1000).toFixed(0);
      for (const t of targets) {
        const suffix = t.label ? ` ${t.label}` : '';
        rows.push({ bench: 'daemon', metric: `daemon CPU per warm invoke, ${who}${suffix}`, value: `${cpuPer(`daemon${t.label}`)} µs`, baseline: `instance ${cpuPer(`direct${t.label}`)} µs per direct call` });
      }
      rows.push({ bench: 'daemon', metric: `floor: bare node proxy's CPU per call, ${who}`, value: `${cpuPer('floor')} µs` });
      const p = (name: string, q: number) => percentile(lat.get(name)!, q);
      const overhead = (q: 50 | 99, what: string, direct: string, via: string, max?: number): Row => ({
        bench: 'daemon',
        metric: `${what} p${q}, ${who}`,
        value: `${p(via, q) >= p(direct, q) ? '+' : ''}${ms(p(via, q) - p(direct, q))}`,
        figure: p(via, q) - p(direct, q),
        unit: 'ms',
        baseline: `direct ${ms(p(direct, q))}, through ${ms(p(via, q))}`,
        ratio: ratio(p(via, q), p(direct, q)),
        ...(max === undefined ? {} : { goal: { max, unit: 'ms' } }),
      });
      for (const t of targets) {
        const what = `warm invoke overhead${t.label ? ` ${t.label}` : ''} (daemon vs same instance)`;
        rows.push(overhead(50, what, `direct${t.label}`, `daemon${t.label}`, t.label ? undefined : 1), overhead(99, what, `direct${t.label}`, `daemon${t.label}`, t.label ? undefined : 3));
      }
      rows.push(overhead(50, 'floor: bare node proxy overhead (vs same instance)', `direct`, 'floor'), overhead(99, 'floor: bare node proxy overhead (vs same instance)', `direct`, 'floor'));
    }
  } finally {
    await floor?.close();
    for (const t of targets) await t.close();
  }
  rows.push({ bench: 'daemon', metric: 'load average (1 min) before / after the invoke rows', value: `${load0.toFixed(2)} / ${loadavg()[0]!.toFixed(2)}` });
  return rows;
}

/** BENCH_BASE_DAEMON_NODE_ARGS: node flags for the base build's daemon alone (to measure a flag: the base is then this build). */
const baseNodeArgs = () => (process.env.BENCH_BASE_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);

export async function daemonSpeedBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const { quick } = opts;
  const base = process.env.BENCH_BASE_DAEMON;
  return [...(await startRows({ quick })), ...(await invokeRows({ quick, base, baseNodeArgs: baseNodeArgs() }))];
}
