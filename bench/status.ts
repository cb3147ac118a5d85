/**
 * `platform status` (issue 25): first paint on a terminal (spawn to the first frame showing the
 * header, and to the first frame with the project's data) and the dashboard's peak RSS after a
 * few refreshes, against `node -e 0`; `status --json` beside them (no ink, no React loaded).
 * The terminal is a real pseudo-terminal (util-linux `script`), read as a stream: no polling.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { BENCH_ADMIN, median, ms, ratio, samples, startDaemonProcess, stopDaemonProcess, type BenchOptions, type Row } from './lib.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'run.js');

const maxRssKb = async (args: string[], env: NodeJS.ProcessEnv): Promise<number> => {
  const { stderr } = await run('/usr/bin/time', ['-f', 'maxrss=%M', process.execPath, ...args], { env });
  return Number(/maxrss=(\d+)/.exec(stderr)![1]);
};
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;

interface Paint {
  header: number;
  data: number;
  rssKb: number;
}

/** One dashboard run in a 100x30 pseudo-terminal: times to the header and to the data, then q and its peak RSS. */
function paint(env: NodeJS.ProcessEnv, watchMs: number): Promise<Paint> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const cmd = `stty cols 100 rows 30; exec /usr/bin/time -f maxrss=%M ${process.execPath} ${BIN} status --interval 1`;
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    let header = 0;
    let data = 0;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!header && out.includes('platform status ·')) header = performance.now() - t0;
      if (!data && out.includes('project default ·') && out.includes('agents/functions (')) {
        data = performance.now() - t0;
        setTimeout(() => child.stdin.write('q'), watchMs);
      }
    });
    child.on('exit', (code) => {
      const rss = /maxrss=(\d+)/.exec(out);
      if (code !== 0 || !rss || !header || !data) reject(new Error(`status run failed (exit ${code}): ${out.slice(-500)}`));
      else resolve({ header, data, rssKb: Number(rss[1]) });
    });
  });
}

export async function statusBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const runs = opts.quick ? 1 : 5;
  /** How long the dashboard runs (refreshing every second) before its peak RSS is read. */
  const watchMs = opts.quick ? 1000 : 4000;
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-status-'));
  const daemon = await startDaemonProcess(home);
  const env = { ...process.env, PLATFORM_HOME: home, PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '', CI: '0' };
  try {
    await new Promise<void>((resolve, reject) => {
      const child = execFile(process.execPath, [BIN, 'login', '--email', BENCH_ADMIN.email, '--password-stdin'], { env }, (e) => (e ? reject(e) : resolve()));
      child.stdin!.end(BENCH_ADMIN.password);
    });
    // Something on every refresh: a topic with a subscription.
    await run(process.execPath, [BIN, 'topics', 'create', 'orders'], { env });
    await run(process.execPath, [BIN, 'subscriptions', 'create', 'orders', 'workers'], { env });

    const node = await samples(runs, () => run(process.execPath, ['-e', '0']));
    const nodeRss = await maxRssKb(['-e', '0'], env);
    const paints: Paint[] = [];
    for (let i = 0; i < runs; i++) paints.push(await paint(env, watchMs));
    const json = await samples(runs, () => run(process.execPath, [BIN, 'status', '--json'], { env }));
    const jsonRss = await maxRssKb([BIN, 'status', '--json'], env);
    const header = median(paints.map((p) => p.header));
    const data = median(paints.map((p) => p.data));
    const rss = median(paints.map((p) => p.rssKb));
    const baseline = `node -e 0 ${ms(median(node))}`;
    return [
      { bench: 'status', metric: `first paint: spawn to header (median of ${runs})`, value: ms(header), baseline, ratio: ratio(header, median(node)), goal: '' },
      { bench: 'status', metric: `first paint with the project's data (median of ${runs})`, value: ms(data), baseline, ratio: ratio(data, median(node)), goal: '' },
      { bench: 'status', metric: `dashboard peak RSS after ${watchMs / 1000} s of 1 s refreshes`, value: mb(rss), baseline: `node -e 0 ${mb(nodeRss)}`, ratio: ratio(rss, nodeRss), goal: '' },
      { bench: 'status', metric: `status --json (median of ${runs})`, value: ms(median(json)), baseline, ratio: ratio(median(json), median(node)), goal: '' },
      { bench: 'status', metric: 'status --json peak RSS', value: mb(jsonRss), baseline: `node -e 0 ${mb(nodeRss)}`, ratio: ratio(jsonRss, nodeRss), goal: '' },
    ];
  } finally {
    await stopDaemonProcess(daemon.pid);
    rmSync(home, { recursive: true, force: true });
  }
}
