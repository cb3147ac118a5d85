/**
 * A search client in a process of its own, for the ingestion benchmark: a user's search comes from
 * another program, not from the event loop that is sending eight 4 MB bodies. Timed in the same
 * process as the uploaders, a search's latency also counts the uploaders' turns on that loop
 * (writing their bodies, reading their answers); timed here, it is what a separate caller sees.
 *
 * The child is plain JavaScript run by `node -e` (no tsx, no imports of the bench), so its own
 * start-up and loop stay small. It takes its configuration as the first line on stdin (the query
 * bodies are too large for argv), says `ready` once a first search and a first /healthz answered,
 * and on any later line on stdin finishes the requests it has in flight and writes its latencies as
 * one JSON line.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const CHILD = `
const { performance } = require('node:perf_hooks');
const { createInterface } = require('node:readline');
const lines = createInterface({ input: process.stdin });
let cfg;
let running = true;
const pace = () => new Promise((r) => setTimeout(r, cfg.paceMs));
async function search(i) {
  const r = await fetch(cfg.url + cfg.path, {
    method: 'POST',
    headers: { authorization: 'Bearer ' + cfg.token, 'content-type': 'application/json' },
    body: cfg.bodies[i % cfg.bodies.length],
  });
  const text = await r.text();
  if (!r.ok) throw new Error('search: ' + r.status + ' ' + text.slice(0, 200));
}
const healthz = () => fetch(cfg.url + '/healthz').then((r) => r.text());
async function loop(times, request) {
  for (let i = 0; running; i++) {
    const t = performance.now();
    await request(i);
    times.push(performance.now() - t);
    await pace();
  }
}
lines.on('line', async (line) => {
  if (cfg) { running = false; return; }
  cfg = JSON.parse(line);
  await search(0);
  await healthz();
  process.stdout.write('ready\\n');
  const searches = [], floor = [];
  await Promise.all([loop(searches, search), loop(floor, healthz)]);
  process.stdout.write(JSON.stringify({ searches, floor }) + '\\n');
  lines.close();
});
`;

export interface SearchClientConfig {
  url: string;
  token: string;
  /** The query route (POST), and the bodies it cycles through. */
  path: string;
  bodies: string[];
  /** The pause after each answer, per loop: about 1000 / paceMs searches (and as many /healthz) a second. */
  paceMs: number;
}

/** Starts the child; resolves once it searches. `stop()` resolves with its latencies in ms. */
export async function startSearchClient(cfg: SearchClientConfig): Promise<{ stop: () => Promise<{ searches: number[]; floor: number[] }> }> {
  const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  const out = createInterface({ input: child.stdout! });
  const replies: string[] = [];
  const waiters: Array<(line: string) => void> = [];
  out.on('line', (line) => {
    const w = waiters.shift();
    if (w) w(line);
    else replies.push(line);
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`search client exited (${code})`))));
  exited.catch(() => {});
  const nextLine = () => Promise.race([new Promise<string>((r) => (replies.length ? r(replies.shift()!) : waiters.push(r))), exited]);
  child.stdin!.write(JSON.stringify(cfg) + '\n');
  const ready = await nextLine();
  if (ready !== 'ready') throw new Error(`search client: ${ready}`);
  return {
    stop: async () => {
      child.stdin!.write('stop\n');
      const result = JSON.parse(await nextLine()) as { searches: number[]; floor: number[] };
      child.stdin!.end();
      return result;
    },
  };
}
