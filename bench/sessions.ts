/**
 * Sessions and memory benchmarks (issue 23): what a session's history costs an invoke (100
 * earlier turns read, sent and handed to the function, against a session with none), and the
 * time of an offline memorize (the deterministic extractor over 100 turns).
 */
import { request } from 'undici';
import { Daemon, pack } from './agents.js';
import { median, ms, percentile, ratio, type BenchOptions, type Row } from './lib.js';

const ECHO = 'def handle(event):\n    return {"output": "turn %d" % (len(event.get("history", [])) + 1)}\n';

async function call(d: Daemon, method: string, path: string, body?: unknown, auth = false): Promise<number> {
  const t = performance.now();
  const r = await request(`${d.url}${path}`, {
    method: method as 'POST',
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${d.token}` } : {}) },
  });
  const text = await r.body.text();
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text}`);
  return performance.now() - t;
}

export async function sessionsBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const turns = opts.quick ? 20 : 100;
  const nSamples = opts.quick ? 10 : 60;
  const nMemorize = opts.quick ? 5 : 20;
  const d = await Daemon.start({ PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
  const rows: Row[] = [];
  try {
    await d.deploy({ name: 'echo', framework: 'function', runtime: 'python' }, await pack({ 'main.py': ECHO }));
    const long = 'bench-long-session-0123456789abcdefghij';
    for (let i = 0; i < turns; i++) {
      await call(d, 'POST', '/v1/agents/echo/invoke', { message: `My name is Ada ${i}. I like tea number ${i}. What is the weather like today in town ${i}?`, session_id: long });
    }
    for (let i = 0; i < 5; i++) await call(d, 'POST', '/v1/agents/echo/invoke', { message: 'warm up' });
    const empty: number[] = [];
    const full: number[] = [];
    // Interleaved so load drift on a shared machine hits both sides alike; the rewind (untimed)
    // keeps the long session at exactly 100 turns.
    for (let i = 0; i < nSamples; i++) {
      empty.push(await call(d, 'POST', '/v1/agents/echo/invoke', { message: 'What is the weather like today?' }));
      full.push(await call(d, 'POST', '/v1/agents/echo/invoke', { message: 'What is the weather like today?', session_id: long }));
      await call(d, 'POST', `/v1/agents/echo/sessions/${long}:rewind`, { after_turn: turns }, true);
    }
    rows.push({
      bench: 'sessions',
      metric: `invoke p50, session with ${turns} turns of history vs empty session (function, process)`,
      value: ms(median(full)),
      baseline: ms(median(empty)),
      ratio: ratio(median(full), median(empty)),
    });
    rows.push({ bench: 'sessions', metric: `invoke p95, ${turns} turns of history vs empty`, value: ms(percentile(full, 95)), baseline: ms(percentile(empty, 95)), ratio: ratio(percentile(full, 95), percentile(empty, 95)) });

    await call(d, 'PUT', '/v1/agents/echo/memory/policy', { enabled: true }, true);
    const memorize: number[] = [];
    for (let i = 0; i < nMemorize; i++) {
      await call(d, 'DELETE', '/v1/agents/echo/memory?user_id=anonymous', undefined, true);
      memorize.push(await call(d, 'POST', `/v1/agents/echo/sessions/${long}/memorize`, undefined, true));
    }
    rows.push({ bench: 'sessions', metric: `memorize offline, ${turns} turns -> ${turns * 2} facts (deterministic extractor, median of ${nMemorize})`, value: ms(median(memorize)) });
  } finally {
    await d.stop();
  }
  return rows;
}
