/**
 * Messaging benchmark: publish throughput (batches of 100), publish-to-pull-to-ack throughput
 * with several consumers, p50/p99 publish-to-delivery latency, push deliveries per second to a
 * local receiver. Baselines measured in the same run, from the same client process: a raw SQLite
 * insert loop (the floor of our storage) and redis-server streams (XADD / XREADGROUP / XACK)
 * when redis-server is installed. Run: npx tsx bench/messaging.ts [--messages 100000]
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { percentile as pct, printTable, processCpuMs, type BenchOptions, type Row } from './lib.js';
import { knob, standaloneOptions } from './options.js';

const CONSUMERS = 4;
const ADMIN = { email: 'bench@example.test', password: 'Bench-Password-123' };
const BODY = 'x'.repeat(100);

// With BENCH_CPU_PROF or BENCH_PHASES=1, phase boundaries go to stderr on the monotonic clock (µs,
// the clock of a .cpuprofile's startTime) so a daemon profile can be cut per phase.
const mark = (phase: string) => {
  if (process.env.BENCH_CPU_PROF || process.env.BENCH_PHASES) process.stderr.write(`phase ${phase} ${process.hrtime.bigint() / 1000n}\n`);
};
const rate = (n: number, ms: number) => n / (ms / 1000);
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2));

export async function messagingBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  // 100,000 messages (1,000 publish requests): with 20,000 most of the run is the daemon's warm-up
  // (its first ~100 requests cost 2-3x, before V8 has optimized the path), not its steady state.
  // Quick mode's 5,000 therefore measure mostly the warm-up: a smoke run, not the figure.
  const N = knob('messages', 5000, 100_000, opts);
  const latencyRounds = opts.quick ? 100 : 500;
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-msg-'));
  // The daemon runs as its own process, as redis-server does, so both baselines are measured
  // from the same client process over loopback.
  const d = await spawnDaemon(home);
  const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
  let redis: Awaited<ReturnType<typeof startRedis>>;
  try {
    redis = await startRedis();
    // undici's request with keep-alive connections: the client shares the 2 cores with the
    // daemon, so it should cost as little CPU as ioredis does for the redis baseline.
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await request(d.url + path, {
        method: method as 'GET',
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.body.json()) as any;
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
      return json;
    };
    let token = '';
    token = (await (await fetch(`${d.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json() as any).token;
    // The messaging API takes the project's UUID (spec 3), not its slug.
    const project = (await api('GET', '/v1/projects/default')) as { id: string };
    const T = `/v1/projects/${project.id}/topics`;
    const ready = async (path: string) => {
      while (!(await api('GET', path)).ready) await new Promise((r) => setTimeout(r, 2));
    };
    const topic = async (name: string, subs: Array<Record<string, unknown>>) => {
      await api('POST', T, { name, max_bytes: '256Mi' });
      await ready(`${T}/${name}`);
      for (const s of subs) {
        await api('POST', `${T}/${name}/subscriptions`, s);
        await ready(`${T}/${name}/subscriptions/${s.name}`);
      }
    };
    const batch = (prefix: string) => ({ messages: Array.from({ length: 100 }, (_, i) => ({ text: `${prefix}-${i}-${BODY}` })) });

    // 1. Publish throughput: batches of 100, 4 publishers.
    await topic('tput', [{ name: 'drain', max_ack_pending: 100_000 }]);
    let sent = 0;
    const cpu0 = processCpuMs(d.child.pid);
    mark('publish');
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        while (sent < N) {
          sent += 100;
          await api('POST', `${T}/tput:publish`, batch(`w${w}`));
        }
      }),
    );
    const publishMs = performance.now() - t0;
    const published = sent;
    const cpu1 = processCpuMs(d.child.pid);

    // 2. Pull + ack end to end with several consumers.
    let consumed = 0;
    mark('pull');
    const t1 = performance.now();
    await Promise.all(
      Array.from({ length: CONSUMERS }, async () => {
        while (consumed < published) {
          const r = await api('POST', `${T}/tput/subscriptions/drain:pull`, { max_messages: 100, timeout_ms: 200 });
          if (!r.messages.length) continue;
          consumed += r.messages.length;
          await api('POST', `${T}/tput/subscriptions/drain:acknowledge`, { ack_ids: r.messages.map((m: any) => m.ack_id) });
        }
      }),
    );
    const pullMs = performance.now() - t1;
    const cpu2 = processCpuMs(d.child.pid);
    mark('latency');

    // 3. Publish-to-delivery latency with a consumer that keeps up: as for redis below, a pull is
    // waiting when the message is published; the time runs from the publish call to the delivery.
    await topic('lat', [{ name: 'rx' }]);
    const latencies: number[] = [];
    for (let i = 0; i < latencyRounds; i++) {
      const waiting = api('POST', `${T}/lat/subscriptions/rx:pull`, { max_messages: 100, timeout_ms: 5000 });
      await new Promise((r) => setTimeout(r, 1)); // let the long poll reach the daemon
      const s = performance.now();
      await api('POST', `${T}/lat:publish`, { messages: [{ text: `l${i}` }] });
      const got = await waiting;
      latencies.push(performance.now() - s);
      await api('POST', `${T}/lat/subscriptions/rx:ack`, { ack_ids: got.messages.map((m: any) => m.ack_id) });
    }

    // 4. Push deliveries per second to a local receiver.
    mark('push');
    let received = 0;
    let allIn: () => void = () => {};
    const PUSH_N = Math.min(N, opts.quick ? 1000 : 5_000);
    const done = new Promise<void>((r) => (allIn = r));
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(204).end();
        if (++received === PUSH_N) allIn();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const port = (receiver.address() as AddressInfo).port;
    await topic('push', [{ name: 'hook', deliver: { mode: 'push', push: { url: `http://127.0.0.1:${port}/`, content_mode: 'cloudevents-binary' } } }]);
    const t3 = performance.now();
    for (let i = 0; i < PUSH_N; i += 100) await api('POST', `${T}/push:publish`, batch(`p${i}`));
    await done;
    const pushMs = performance.now() - t3;
    receiver.close();
    mark('end');

    // Baselines.
    const sqlite = sqliteBaseline(home, N);
    const rs = redis ? await redisBaseline(redis.port, N, latencyRounds) : undefined;

    const pubRate = rate(published, publishMs);
    const pullRate = rate(consumed, pullMs);
    const rows: Row[] = [
      { bench: 'messaging', metric: 'publish msgs/s (HTTP, batches of 100)', value: fmt(pubRate), baseline: rs ? `redis XADD ${fmt(rs.xadd)}` : 'redis n/a', ratio: rs ? `${(pubRate / rs.xadd).toFixed(2)}x` : '', goal: '50,000' },
      { bench: 'messaging', metric: 'publish vs raw SQLite insert loop', value: fmt(pubRate), baseline: `sqlite ${fmt(sqlite)}`, ratio: `${(pubRate / sqlite).toFixed(2)}x` },
      { bench: 'messaging', metric: `pull+ack msgs/s (${CONSUMERS} consumers)`, value: fmt(pullRate), baseline: rs ? `redis XREADGROUP+XACK ${fmt(rs.read)}` : 'redis n/a', ratio: rs ? `${(pullRate / rs.read).toFixed(2)}x` : '', goal: '20,000' },
      // The daemon's own CPU per message (user + sys): steadier than rates on a shared machine.
      ...(cpu0 !== undefined && cpu1 !== undefined && cpu2 !== undefined
        ? [
            { bench: 'messaging', metric: 'daemon CPU µs per message published', value: ((cpu1 - cpu0) * 1000 / published).toFixed(1) },
            { bench: 'messaging', metric: 'daemon CPU µs per message pulled+acked', value: ((cpu2 - cpu1) * 1000 / consumed).toFixed(1) },
          ]
        : []),
      { bench: 'messaging', metric: 'publish-to-pull p50 ms', value: pct(latencies, 50).toFixed(2), baseline: rs ? `redis ${rs.p50.toFixed(2)}` : '', ratio: rs ? `${(pct(latencies, 50) / rs.p50).toFixed(2)}x` : '' },
      { bench: 'messaging', metric: 'publish-to-pull p99 ms', value: pct(latencies, 99).toFixed(2), baseline: rs ? `redis ${rs.p99.toFixed(2)}` : '', ratio: rs ? `${(pct(latencies, 99) / rs.p99).toFixed(2)}x` : '', goal: '< 10' },
      { bench: 'messaging', metric: 'push deliveries/s (local receiver)', value: fmt(rate(PUSH_N, pushMs)) },
    ];
    return rows;
  } finally {
    await agent.close();
    d.child.kill('SIGTERM');
    await new Promise((r) => d.child.once('exit', r));
    redis?.child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  }
}

/** Starts the daemon from source (tsx) with the messaging knobs the bench needs. */
async function spawnDaemon(home: string): Promise<{ child: ChildProcess; url: string }> {
  const root = join(import.meta.dirname, '..');
  const built = join(root, 'dist', 'daemon', 'main.js');
  const argv = existsSync(built) ? [built] : ['--import', 'tsx', join(root, 'src', 'daemon', 'main.ts')];
  // BENCH_CPU_PROF=<dir> writes a CPU profile of the daemon there when it stops; BENCH_TRACE_GC=1
  // makes it log its GC pauses to the file named by BENCH_DAEMON_LOG (its stdout).
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : process.env.BENCH_TRACE_GC ? ['--trace-gc'] : [];
  const child = spawn(process.execPath, [...prof, ...argv, '--port', '0'], {
    env: {
      ...process.env,
      PLATFORM_HOME: home,
      PLATFORM_ADMIN_EMAIL: ADMIN.email,
      PLATFORM_ADMIN_PASSWORD: ADMIN.password,
      PLATFORM_RATE_LIMIT_BURST: '0',
      PLATFORM_PUBSUB_ALLOW_LOOPBACK_PUSH: 'true',
      PLATFORM_PUBSUB_PUSH_CONCURRENCY: '32',
    },
    stdio: process.env.BENCH_DAEMON_LOG ? ['ignore', openSync(process.env.BENCH_DAEMON_LOG, 'w'), 'ignore'] : 'ignore',
  });
  const locator = join(home, 'daemon.json');
  for (let i = 0; i < 2000; i++) {
    if (existsSync(locator)) {
      const l = JSON.parse(readFileSync(locator, 'utf8')) as { pid: number; url: string };
      if (l.pid === child.pid) return { child, url: l.url };
    }
    await new Promise((r) => setTimeout(r, 15));
  }
  throw new Error('daemon did not start');
}

/** The storage floor: the same row shape inserted with prepared statements, 100 per transaction. */
function sqliteBaseline(home: string, n: number): number {
  const db = new Database(join(home, 'baseline.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE m (seq INTEGER PRIMARY KEY AUTOINCREMENT, topic INTEGER, data BLOB, size INTEGER)');
  const ins = db.prepare('INSERT INTO m (topic, data, size) VALUES (1, ?, ?)');
  const batch = db.transaction((k: number) => {
    for (let i = 0; i < 100; i++) ins.run(Buffer.from(`${k}-${i}-${BODY}`), 100);
  });
  const t = performance.now();
  for (let k = 0; k < n / 100; k++) batch(k);
  const r = rate(n, performance.now() - t);
  db.close();
  return r;
}

async function startRedis(): Promise<{ child: ChildProcess; port: number } | undefined> {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    process.stderr.write('redis-server not installed: the redis streams baseline is skipped\n');
    return undefined;
  }
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  // Wait until the server accepts connections (it binds a moment after the spawn).
  for (let i = 0; ; i++) {
    const up = await new Promise<boolean>((r) => {
      const sock = connect(port, '127.0.0.1', () => (sock.end(), r(true)));
      sock.on('error', () => r(false));
    });
    if (up) break;
    if (i > 400 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error('redis-server did not start');
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const probe = new Redis({ port });
  await probe.ping();
  probe.disconnect();
  return { child, port };
}

/** Redis streams through the same client process: XADD pipelines of 100, XREADGROUP+XACK, latency. */
async function redisBaseline(port: number, n: number, latencyRounds: number) {
  const r = new Redis({ port });
  const c = new Redis({ port });
  await r.xgroup('CREATE', 's', 'g', '$', 'MKSTREAM');
  let t = performance.now();
  for (let k = 0; k < n / 100; k++) {
    const p = r.pipeline();
    for (let i = 0; i < 100; i++) p.xadd('s', '*', 'd', `${k}-${i}-${BODY}`);
    await p.exec();
  }
  const xadd = rate(n, performance.now() - t);
  let read = 0;
  t = performance.now();
  await Promise.all(
    Array.from({ length: CONSUMERS }, async (_, w) => {
      const conn = new Redis({ port });
      while (read < n) {
        const res = (await conn.xreadgroup('GROUP', 'g', `c${w}`, 'COUNT', 100, 'BLOCK', 200, 'STREAMS', 's', '>')) as [string, [string, string[]][]][] | null;
        const ids = res?.[0]?.[1].map(([id]) => id) ?? [];
        if (!ids.length) continue;
        read += ids.length;
        await conn.xack('s', 'g', ...ids);
      }
      conn.disconnect();
    }),
  );
  const readRate = rate(read, performance.now() - t);
  await r.xgroup('CREATE', 'l', 'g', '$', 'MKSTREAM');
  const lat: number[] = [];
  for (let i = 0; i < latencyRounds; i++) {
    const waiting = c.xreadgroup('GROUP', 'g', 'c', 'COUNT', 100, 'BLOCK', 1000, 'STREAMS', 'l', '>') as Promise<[string, [string, string[]][]][] | null>;
    await new Promise((res) => setTimeout(res, 1)); // as for the daemon: let the read reach the server
    const s = performance.now();
    await r.xadd('l', '*', 'd', `l${i}`);
    const got = await waiting;
    lat.push(performance.now() - s);
    await c.xack('l', 'g', ...(got?.[0]?.[1].map(([id]) => id) ?? []));
  }
  r.disconnect();
  c.disconnect();
  return { xadd, read: readRate, p50: pct(lat, 50), p99: pct(lat, 99) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printTable(await messagingBench(standaloneOptions()));
}
