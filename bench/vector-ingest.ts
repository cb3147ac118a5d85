/**
 * Vector ingestion benchmark (issue 26): acknowledged upserts per second at 768 dimensions with 8
 * concurrent clients sending batches of 256 points to a spawned daemon over HTTP, the p50 of
 * searches sent meanwhile, the search p50 right after the last acknowledgement, whether every
 * acknowledged point is found at once, and recall@10 once the graph is whole.
 *
 * Bodies are serialized before the clock starts, so the clients' own JSON work does not compete
 * with the daemon for the machine's cores. `--ingest-baseline <dist/daemon/main.js>` runs the same
 * load against another build (the code before the change) in the same run, for the ratio.
 *
 * Run: npx tsx bench/vector-ingest.ts [--ingest-points 16384] [--ingest-baseline /path/dist/daemon/main.js]
 *      [--ingest-recall 1] (waits for the graph to be whole and measures recall@10 and p50 there)
 *      [--ingest-search-client process|inline|both] (where the searches during the burst come from: a
 *      process of their own (bench/search-client.ts), the bench's own event loop beside the uploaders,
 *      or the first and then a second run of each build with the second)
 *      [--ingest-rounds 1] (rounds alternating which build goes first; each figure the median of the rounds)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { benchLogin, percentile, startDaemonProcess, stopDaemonProcess, type BenchOptions, type Row } from './lib.js';
import { standaloneOptions } from './options.js';
import { thousands } from './table.js';
import { startSearchClient } from './search-client.js';
import { bruteForce, dataset } from './vector-data.js';

const arg = (name: string, d: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : d;
};

const DIMS = 768;
const CLIENTS = 8;
const BATCH = 256;
const K = 10;

interface IngestFigures {
  pointsPerSec: number;
  searchesDuring: number;
  searchP50During: number;
  searchP99During: number;
  /** GET /healthz meanwhile: what the event loop alone makes a request wait. */
  floorP50During: number;
  searchP50After: number;
  /** Share of acknowledged points that the first search for each finds (top 1 by its own vector). */
  foundAtOnce: number;
  recall?: number;
  graphP50?: number;
  buildS?: number;
  /** CPU seconds of the daemon's main thread (the event loop) and of the whole process while the clients ingested. */
  loopCpuS?: number;
  processCpuS?: number;
  /** While ingesting: the event loop's seconds waiting for a core, and its sleeps. */
  loopWaitS?: number;
  loopSleeps?: number;
  /** From the first upsert until the graph is whole: the event loop's CPU seconds, and /healthz p50 after the burst. */
  loopCpuToWholeS?: number;
  floorP50Building?: number;
  /** The daemon's peak resident memory (VmHWM) once the graph is whole, MiB. */
  peakRssMiB?: number;
}

/**
 * The main thread's time waiting for a core (run queue, /proc schedstat) in seconds and its
 * voluntary context switches (sleeps: an idle event loop blocks in epoll), or undefined elsewhere.
 */
function schedOf(pid: number): { waitS: number; sleeps: number } | undefined {
  try {
    const wait = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
    const m = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8'));
    return m ? { waitS: wait, sleeps: Number(m[1]) } : undefined;
  } catch {
    return undefined;
  }
}

/** Peak resident memory of a process in MiB, from /proc (undefined elsewhere). */
function peakRssMiB(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) of a thread or process from /proc, or undefined elsewhere: unlike
 * latencies, this does not depend on how loaded the machine is. `tid` equal to `pid` is the main thread.
 */
function cpuSeconds(pid: number, tid?: number): number | undefined {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Where the searches sent during ingestion come from: a process of their own, or the bench's own event loop. */
type SearchClient = 'process' | 'inline';

async function measure(main: string | undefined, n: number, withRecall: boolean, searchClient: SearchClient, log: (s: string) => void): Promise<IngestFigures> {
  const nq = 100;
  const { base, queries } = dataset(n, nq, DIMS, 11);
  const row = (data: Float32Array, i: number) => Array.from(data.subarray(i * DIMS, (i + 1) * DIMS));
  const bodies: string[] = [];
  for (let b = 0; b < n; b += BATCH) {
    const points = [];
    for (let i = b; i < Math.min(n, b + BATCH); i++) points.push({ id: i, vector: row(base, i), payload: { group: i % 10 } });
    bodies.push(JSON.stringify({ points }));
  }
  const queryBodies = Array.from({ length: nq }, (_, i) => JSON.stringify({ vector: row(queries, i), top_k: K, with_payload: false }));

  const home = mkdtempSync(join(tmpdir(), 'platform-bench-vector-ingest-'));
  const d = await startDaemonProcess(home, { PLATFORM_VECTOR_READY_DELAY_MS: '0' }, ...(main ? [main] : []));
  try {
    const token = await benchLogin(d.url);
    const call = async (method: string, path: string, body?: string) => {
      const r = await fetch(d.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
      const text = await r.text();
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 200)}`);
      return JSON.parse(text);
    };
    const project = (await call('GET', '/v1/projects')).projects.find((p: { slug: string }) => p.slug === 'default').id;
    const idx = `/v1/projects/${project}/indexes`;
    await call('POST', idx, JSON.stringify({ name: 'ingest', dimensions: DIMS, distance: 'cosine' }));
    while (!(await call('GET', `${idx}/ingest`)).index.ready) await new Promise((r) => setTimeout(r, 5));
    // A first small batch, so every build has its graph and the timing below is of steady ingestion.
    const query = (i: number) => call('POST', `${idx}/ingest:query`, queryBodies[i % nq]);
    await query(0);

    let next = 0;
    let ingesting = true;
    // Searches arrive as a user's would, not back to back: about 50 a second, and as many bare
    // requests (GET /healthz: with no work behind it, a request waits only for the event loop).
    const PACE_MS = 20;
    let during: number[] = [];
    let floor: number[] = [];
    let meanwhile: () => Promise<void>;
    if (searchClient === 'process') {
      const client = await startSearchClient({ url: d.url, token, path: `${idx}/ingest:query`, bodies: queryBodies, paceMs: PACE_MS });
      meanwhile = async () => {
        ({ searches: during, floor } = await client.stop());
      };
    } else {
      // On the bench's own event loop, beside the eight uploaders: each latency also counts their turns.
      const searcher = (async () => {
        for (let i = 0; ingesting; i++) {
          const t = performance.now();
          await query(i);
          during.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, PACE_MS));
        }
      })();
      const floorer = (async () => {
        while (ingesting) {
          const t = performance.now();
          await fetch(`${d.url}/healthz`).then((r) => r.text());
          floor.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, PACE_MS));
        }
      })();
      meanwhile = async () => {
        await Promise.all([searcher, floorer]);
      };
    }
    const loop0 = cpuSeconds(d.pid, d.pid);
    const proc0 = cpuSeconds(d.pid);
    const sched0 = schedOf(d.pid);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let b = next++; b < bodies.length; b = next++) await call('POST', `${idx}/ingest:upsert`, bodies[b]);
      }),
    );
    const ingestS = (performance.now() - t0) / 1000;
    const loop1 = cpuSeconds(d.pid, d.pid);
    const proc1 = cpuSeconds(d.pid);
    const sched1 = schedOf(d.pid);
    ingesting = false;
    await meanwhile();
    log(`  ${n} points acknowledged in ${ingestS.toFixed(1)} s`);

    // Right after the last acknowledgement: searches while the graph may still be behind.
    const after: number[] = [];
    let found = 0;
    const probes = 50;
    for (let i = 0; i < probes; i++) {
      const id = Math.floor((i * n) / probes);
      const t = performance.now();
      const r = await call('POST', `${idx}/ingest:query`, JSON.stringify({ vector: row(base, id), top_k: 1, with_payload: false }));
      after.push(performance.now() - t);
      if (r.results[0]?.id === id) found++;
    }
    const figures: IngestFigures = {
      pointsPerSec: n / ingestS,
      searchesDuring: during.length,
      searchP50During: percentile(during, 50),
      searchP99During: percentile(during, 99),
      floorP50During: percentile(floor, 50),
      searchP50After: percentile(after, 50),
      foundAtOnce: found / probes,
      ...(loop0 !== undefined && loop1 !== undefined ? { loopCpuS: loop1 - loop0 } : {}),
      ...(proc0 !== undefined && proc1 !== undefined ? { processCpuS: proc1 - proc0 } : {}),
      ...(sched0 && sched1 ? { loopWaitS: sched1.waitS - sched0.waitS, loopSleeps: sched1.sleeps - sched0.sleeps } : {}),
    };
    if (withRecall) {
      const tb = performance.now();
      // Meanwhile a bare request every 20 ms: what the graph's build makes the event loop wait.
      const building: number[] = [];
      let whole = false;
      const prober = (async () => {
        while (!whole) {
          const t = performance.now();
          await fetch(`${d.url}/healthz`).then((r) => r.text());
          building.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      while ((await call('GET', `${idx}/ingest`)).index.collection_status !== 'green') await new Promise((r) => setTimeout(r, 200));
      whole = true;
      await prober;
      figures.buildS = ingestS + (performance.now() - tb) / 1000;
      const loopWhole = cpuSeconds(d.pid, d.pid);
      if (loop0 !== undefined && loopWhole !== undefined) figures.loopCpuToWholeS = loopWhole - loop0;
      figures.floorP50Building = percentile(building, 50);
      figures.peakRssMiB = peakRssMiB(d.pid);
      const lat: number[] = [];
      let hits = 0;
      for (let i = 0; i < nq; i++) {
        const t = performance.now();
        const r = await query(i);
        lat.push(performance.now() - t);
        const want = new Set(bruteForce(base, DIMS, queries.subarray(i * DIMS, (i + 1) * DIMS)));
        hits += r.results.filter((x: { id: number }) => want.has(x.id)).length;
      }
      figures.recall = hits / (K * nq);
      figures.graphP50 = percentile(lat, 50);
    }
    return figures;
  } finally {
    await stopDaemonProcess(d.pid);
    rmSync(home, { recursive: true, force: true });
  }
}

const f = (x: number, d = 2) => x.toFixed(d);

/** Each figure's median over runs (those that measured it), or undefined without runs. */
function medianFigures(runs: IngestFigures[]): IngestFigures | undefined {
  if (runs.length === 0) return undefined;
  const out: Record<string, number> = {};
  for (const key of Object.keys(runs[0]!) as Array<keyof IngestFigures>) {
    const xs = runs.map((x) => x[key]).filter((v): v is number => typeof v === 'number');
    if (xs.length === 0) continue;
    const sorted = xs.sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    out[key] = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  }
  return out as unknown as IngestFigures;
}

export async function vectorIngestBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const n = Number(arg('ingest-points', process.env.BENCH_VECTOR_INGEST_POINTS ?? (opts.quick ? '2000' : '16384')));
  const baselineMain = arg('ingest-baseline', process.env.BENCH_VECTOR_INGEST_BASELINE ?? '');
  const withRecall = arg('ingest-recall', '1') !== '0';
  const log = (s: string) => process.stderr.write(s + '\n');
  // `both`: a second run of each build with the searches sent from the bench's own event loop (as
  // before the search client had a process of its own), to show how much of that figure was the client.
  const clientArg = arg('ingest-search-client', 'process');
  if (!['process', 'inline', 'both'].includes(clientArg)) throw new Error(`--ingest-search-client: process, inline or both, not ${clientArg}`);
  const client: SearchClient = clientArg === 'inline' ? 'inline' : 'process';
  // Rounds alternate which build goes first (new, base; then base, new; ...): on this shared machine
  // the first daemon of an invocation was often the slower one, whichever it was. Each figure is then
  // the median over the rounds; recall (which waits for the whole graph) is measured in the first round.
  const rounds = Math.max(1, Number(arg('ingest-rounds', '1')));
  log(`vector ingest: ${n} x ${DIMS} points, ${CLIENTS} clients, batches of ${BATCH}, searches from ${client === 'process' ? 'a process of their own' : "the bench's event loop"}, ${rounds} round(s)`);
  const runs = { now: [] as IngestFigures[], before: [] as IngestFigures[], nowInline: [] as IngestFigures[], beforeInline: [] as IngestFigures[] };
  const brief = (x: IngestFigures) =>
    `${f(x.pointsPerSec, 0)} points/s, search p50 ${f(x.searchP50During)} ms, /healthz p50 ${f(x.floorP50During)} ms, loop CPU ${f(((x.loopCpuS ?? NaN) * 1e6) / n, 0)} ms per 1,000`;
  for (let r = 0; r < rounds; r++) {
    const order = baselineMain && r % 2 === 1 ? (['before', 'now'] as const) : (['now', 'before'] as const);
    for (const which of order) {
      if (which === 'before' && !baselineMain) continue;
      const main = which === 'now' ? undefined : baselineMain;
      const x = await measure(main, n, withRecall && r === 0, client, log);
      log(`  round ${r + 1}, ${which === 'now' ? 'this build' : 'baseline'}: ${brief(x)}`);
      runs[which].push(x);
      if (clientArg === 'both') {
        const y = await measure(main, n, false, 'inline', log);
        log(`  round ${r + 1}, ${which === 'now' ? 'this build' : 'baseline'}, searched from the bench's event loop: ${brief(y)}`);
        runs[which === 'now' ? 'nowInline' : 'beforeInline'].push(y);
      }
    }
  }
  const now = medianFigures(runs.now)!;
  const before = medianFigures(runs.before);
  const nowInline = medianFigures(runs.nowInline);
  const beforeInline = medianFigures(runs.beforeInline);
  const tag = `vector ingest ${thousands(n)} x ${DIMS}d, ${CLIENTS} clients x ${BATCH}`;
  const base = (x: (b: IngestFigures) => string) => (before ? x(before) : 'no baseline run (--ingest-baseline)');
  const rows: Row[] = [
    {
      bench: tag,
      metric: 'acknowledged upserts points/s',
      figure: now.pointsPerSec,
      unit: 'points/s',
      baseline: base((b) => f(b.pointsPerSec, 0)),
      ...(before ? { baselineFigure: before.pointsPerSec } : {}),
      goal: { min: 5000 },
    },
    {
      bench: tag,
      metric: `search p50 / p99 while ingesting, ${client === 'process' ? 'searched from a process of its own' : "searched from the bench's own event loop"} (${now.searchesDuring} searches)`,
      value: `${f(now.searchP50During)} / ${f(now.searchP99During)} ms`,
      figure: now.searchP50During,
      unit: 'ms',
      baseline: base((b) => `${f(b.searchP50During)} / ${f(b.searchP99During)} ms`),
      ratio: before ? `${f(before.searchP50During / now.searchP50During, 1)}x faster p50` : '',
      goal: { max: 10, strict: true, unit: 'ms' },
    },
    ...(nowInline
      ? [
          {
            bench: tag,
            metric: `search p50 / p99 while ingesting, searched from the bench's own event loop (${nowInline.searchesDuring} searches)`,
            value: `${f(nowInline.searchP50During)} / ${f(nowInline.searchP99During)} ms, /healthz p50 ${f(nowInline.floorP50During)} ms, ${f(nowInline.pointsPerSec, 0)} points/s`,
            baseline: beforeInline
              ? `${f(beforeInline.searchP50During)} / ${f(beforeInline.searchP99During)} ms, /healthz p50 ${f(beforeInline.floorP50During)} ms, ${f(beforeInline.pointsPerSec, 0)} points/s`
              : 'no baseline run (--ingest-baseline)',
          },
        ]
      : []),
    {
      bench: tag,
      metric: 'GET /healthz p50 while ingesting (the event loop alone)',
      value: `${f(now.floorP50During)} ms`,
      baseline: base((b) => `${f(b.floorP50During)} ms`),
      ratio: before ? `${f(before.floorP50During / now.floorP50During, 1)}x faster` : '',
    },
    {
      bench: tag,
      metric: 'search p50 right after the last acknowledgement',
      value: `${f(now.searchP50After)} ms`,
      baseline: base((b) => `${f(b.searchP50After)} ms`),
      ratio: before ? `${f(before.searchP50After / now.searchP50After, 1)}x faster` : '',
    },
    {
      bench: tag,
      metric: 'acknowledged points found by the next search',
      value: f(now.foundAtOnce, 2),
      figure: now.foundAtOnce,
      baseline: base((b) => f(b.foundAtOnce, 2)),
      goal: { min: 1 },
    },
  ];
  if (now.loopCpuS !== undefined) {
    const perK = (x: IngestFigures) => `${f(((x.loopCpuS ?? 0) * 1000) / (n / 1000), 0)} ms of ${f(((x.processCpuS ?? 0) * 1000) / (n / 1000), 0)} ms`;
    rows.push({
      bench: tag,
      metric: 'event-loop CPU per 1,000 acknowledged points, of the whole process (ingesting)',
      value: perK(now),
      figure: (now.loopCpuS * 1000) / (n / 1000),
      unit: 'ms',
      baseline: base(perK),
      ratio: before?.loopCpuS ? `${f(before.loopCpuS / now.loopCpuS, 1)}x less` : '',
    });
  }
  if (now.loopWaitS !== undefined) {
    const waits = (x: IngestFigures) =>
      `${f(((x.loopWaitS ?? NaN) * 1000) / (n / 1000), 0)} ms waiting, ${f((x.loopSleeps ?? NaN) / (n / 1000), 0)} sleeps`;
    rows.push({
      bench: tag,
      metric: 'event loop per 1,000 acknowledged points: run-queue wait, sleeps (ingesting)',
      value: waits(now),
      baseline: base(waits),
    });
  }
  if (now.recall !== undefined) {
    rows.push(
      { bench: tag, metric: 'recall@10 once the graph is whole', figure: now.recall, baseline: base((b) => f(b.recall ?? NaN)), goal: { min: 0.99 } },
      {
        bench: tag,
        // Over HTTP from this process's fetch, which alone takes about 1.3 ms for a bare /healthz here:
        // the p50 goal (< 5 ms at 100,000) is the engine's row of bench/vector.ts (largeCase).
        metric: 'search p50 once the graph is whole (HTTP; goal: the 100,000 row)',
        figure: now.graphP50!,
        unit: 'ms',
        baseline: base((b) => `${f(b.graphP50 ?? NaN)} ms`),
      },
      {
        bench: tag,
        metric: 'ingest + graph build until whole',
        value: `${f(now.buildS!, 1)} s`,
        figure: now.buildS!,
        unit: 's',
        baseline: base((b) => `${f(b.buildS ?? NaN, 1)} s`),
        ratio: before?.buildS ? `${f(before.buildS / now.buildS!, 1)}x faster` : '',
      },
      {
        bench: tag,
        metric: 'GET /healthz p50 from the last acknowledgement until whole (the build alone)',
        value: `${f(now.floorP50Building ?? NaN)} ms`,
        baseline: base((b) => `${f(b.floorP50Building ?? NaN)} ms`),
        ratio: before?.floorP50Building && now.floorP50Building ? `${f(before.floorP50Building / now.floorP50Building, 1)}x faster` : '',
      },
      {
        bench: tag,
        metric: 'daemon peak RSS once whole',
        value: `${f(now.peakRssMiB ?? NaN, 0)} MiB`,
        baseline: base((b) => `${f(b.peakRssMiB ?? NaN, 0)} MiB`),
      },
      {
        bench: tag,
        metric: 'event-loop CPU from the first upsert until whole, per 1,000 points',
        value: `${f(((now.loopCpuToWholeS ?? NaN) * 1000) / (n / 1000), 0)} ms`,
        baseline: base((b) => `${f(((b.loopCpuToWholeS ?? NaN) * 1000) / (n / 1000), 0)} ms`),
        ratio: before?.loopCpuToWholeS && now.loopCpuToWholeS ? `${f(before.loopCpuToWholeS / now.loopCpuToWholeS, 1)}x less` : '',
      },
    );
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { printTable } = await import('./lib.js');
  printTable(await vectorIngestBench(standaloneOptions()));
}
