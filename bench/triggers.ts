/**
 * Triggers benchmark (issue 20): schedule firing jitter (actual minus scheduled, p50/p99, over a
 * few hundred firings of seconds schedules), pubsub trigger deliveries per second to a warm
 * function against the same function invoked directly (same concurrency), and object arrival to
 * delivery latency (through `objects put` and through a plain file copy the watcher sees). The
 * target is a Node.js function (the lightest shim); the daemon is its own process.
 * Run: npx tsx bench/triggers.ts [--seconds 15] [--messages 3000]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { c as tarCreate } from 'tar';
import { Agent, request } from 'undici';
import { benchLogin, percentile, ms, ratio, startDaemonProcess, stopDaemonProcess, type BenchOptions, type Row } from './lib.js';
import { knob, standaloneOptions } from './options.js';

const SCHEDULES = 20;
const CONCURRENCY = 16;

const FN_JS = `module.exports.handle = function handle(event) { return { ok: true }; };\n`;

export async function triggersBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const seconds = knob('seconds', 2, 15, opts);
  const messages = knob('messages', 300, 3000, opts);
  const objects = opts.quick ? 10 : 50;
  const copies = opts.quick ? 5 : 20;
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-trg-'));
  const d = await startDaemonProcess(home, { PLATFORM_PUBSUB_PUSH_CONCURRENCY: String(CONCURRENCY), PLATFORM_TRIGGERS_OBJECT_SETTLE_MS: '50', INVOKE_AUTH_REQUIRED: 'false' });
  const agent = new Agent({ connections: CONCURRENCY * 2, keepAliveTimeout: 30_000 });
  const rows: Row[] = [];
  try {
    const token = await benchLogin(d.url);
    const api = async (method: string, path: string, body?: unknown, raw?: string) => {
      const res = await request(d.url + path, {
        method: method as 'GET',
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : raw,
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    const project = await api('GET', '/v1/projects/default');
    const base = `/v1/projects/${project.id}`;
    await deployFunction(d.url, token, home);
    for (let i = 0; i < 200; i++) {
      const a = await api('GET', '/v1/agents/fn?project=default');
      if (a.state === 'ready') break;
      if (a.state === 'failed') throw new Error(`function failed: ${a.message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Warm it.
    await api('POST', '/v1/agents/fn/invoke?project=default', { message: 'warm' });

    // ---- schedule jitter ----
    for (let i = 0; i < SCHEDULES; i++) {
      await api('POST', `${base}/triggers`, { name: `tick-${i}`, target: { service: 'fn' }, source: { type: 'schedule', schedule: { cron: '* * * * * *', payload: '{"tick":true}' } } });
    }
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const jitter: number[] = [];
    for (let i = 0; i < SCHEDULES; i++) {
      const t = await api('GET', `${base}/triggers/tick-${i}`);
      for (const f of t.firings) if (f.actual_time && !f.catch_up) jitter.push(Date.parse(f.actual_time) - Date.parse(f.scheduled_time));
      await api('DELETE', `${base}/triggers/tick-${i}`);
    }
    rows.push(
      { bench: 'triggers', metric: `schedule jitter p50 (${jitter.length} firings, ${SCHEDULES} x every second)`, value: ms(percentile(jitter, 50)) },
      { bench: 'triggers', metric: 'schedule jitter p99', value: ms(percentile(jitter, 99)), goal: '< 50 ms' },
      { bench: 'triggers', metric: 'schedule jitter max', value: ms(Math.max(...jitter)) },
    );

    // ---- direct invoke throughput (the baseline) ----
    const invoke = async () => {
      const res = await request(`${d.url}/v1/agents/fn/invoke?project=default`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: '{"message":"x"}' });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`invoke ${res.statusCode}`);
    };
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < messages) await invoke();
    }));
    const directRate = messages / ((performance.now() - t0) / 1000);

    // ---- pubsub trigger throughput ----
    await api('POST', `${base}/topics`, { name: 'bench' });
    for (let i = 0; i < 100; i++) {
      if ((await api('GET', `${base}/topics/bench`)).ready) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await api('POST', `${base}/triggers`, { name: 'on-bench', target: { service: 'fn' }, source: { type: 'pubsub', pubsub: { topic: 'bench' } } });
    const subPath = `${base}/topics/bench/subscriptions/trigger-on-bench`;
    for (let i = 0; i < 100; i++) {
      if ((await api('GET', subPath)).ready) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const t1 = performance.now();
    for (let i = 0; i < messages; i += 100) {
      const batch = Array.from({ length: Math.min(100, messages - i) }, (_, j) => ({ text: JSON.stringify({ n: i + j }), attributes: { datacontenttype: 'application/json' } }));
      await api('POST', `${base}/topics/bench:publish`, { messages: batch });
    }
    for (;;) {
      const s = (await api('GET', subPath)).stats;
      if (s.backlog === 0 && s.unacknowledged === 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const pubsubRate = messages / ((performance.now() - t1) / 1000);
    const failed = (await api('GET', `${base}/triggers/on-bench`)).firings.filter((f: any) => f.status !== 'succeeded').length;
    rows.push(
      { bench: 'triggers', metric: `pubsub trigger deliveries/s (${messages} messages, ${CONCURRENCY} in flight)`, value: Math.round(pubsubRate).toString(), baseline: `${Math.round(directRate)} direct invoke/s`, ratio: ratio(pubsubRate, directRate), goal: '>= 0.70x' },
    );
    if (failed) rows.push({ bench: 'triggers', metric: 'pubsub firings not succeeded (last 100 kept)', value: String(failed) });

    // ---- object arrival to delivery ----
    await api('POST', `${base}/triggers`, { name: 'on-object', target: { service: 'fn' }, source: { type: 'objectstore', objectstore: { bucket: 'bench' } } });
    const viaPut: number[] = [];
    for (let i = 0; i < objects; i++) {
      const start = Date.now();
      await api('PUT', `${base}/buckets/bench/objects/put-${i}.json`, undefined, JSON.stringify({ i }));
      viaPut.push(await deliveredAt(api, `${base}/triggers/on-object`, `put-${i}`, start));
    }
    const viaCopy: number[] = [];
    const dir = join(home, 'objects', project.short, 'bench');
    for (let i = 0; i < copies; i++) {
      const start = Date.now();
      writeFileSync(join(dir, `copy-${i}.json`), JSON.stringify({ i }));
      viaCopy.push(await deliveredAt(api, `${base}/triggers/on-object`, `copy-${i}`, start));
    }
    rows.push(
      { bench: 'triggers', metric: `object put to delivered p50 (${objects} objects)`, value: ms(percentile(viaPut, 50)) },
      { bench: 'triggers', metric: 'object put to delivered p99', value: ms(percentile(viaPut, 99)) },
      { bench: 'triggers', metric: 'file copy to delivered p50 (watcher, 50 ms settle)', value: ms(percentile(viaCopy, 50)) },
      { bench: 'triggers', metric: 'file copy to delivered p99', value: ms(percentile(viaCopy, 99)) },
    );
  } finally {
    await agent.close();
    await stopDaemonProcess(d.pid);
    rmSync(home, { recursive: true, force: true });
  }
  return rows;
}

/** Waits until the firing count grows and returns the ms from `start` to that delivery's end. */
async function deliveredAt(api: (m: string, p: string) => Promise<any>, path: string, _key: string, start: number): Promise<number> {
  for (;;) {
    const t = await api('GET', path);
    const f = t.firings[0];
    if (f && f.status === 'succeeded' && Date.parse(f.actual_time) >= start - 5) return Date.parse(f.actual_time) + f.duration_ms - start;
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function deployFunction(url: string, token: string, home: string): Promise<void> {
  const dir = mkdtempSync(join(home, 'src-'));
  writeFileSync(join(dir, 'index.js'), FN_JS);
  const tgz = join(home, 'fn.tar.gz');
  await tarCreate({ gzip: true, file: tgz, cwd: dir }, ['index.js']);
  const form = new FormData();
  form.append('name', 'fn');
  form.append('framework', 'function');
  form.append('runtime', 'nodejs');
  form.append('code', new Blob([new Uint8Array((await import('node:fs')).readFileSync(tgz))]), 'code.tar.gz');
  const r = await fetch(`${url}/v1/agents?project=default`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  if (r.status !== 202) throw new Error(`deploy: ${r.status} ${await r.text()}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./lib.js');
  printTable(await triggersBench(standaloneOptions()));
}
