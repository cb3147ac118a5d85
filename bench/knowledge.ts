/**
 * Knowledge benchmarks (issue 23): search p50 over 10,000 chunks of one agent, by BM25 alone and
 * hybrid (BM25 fused with an exact cosine scan) against a local embedding endpoint the bench
 * starts, the way a deployment points PLATFORM_EMBED_BASE_URL at its model server.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchLogin, median, ms, percentile, samples, startDaemonProcess, stopDaemonProcess, type BenchOptions, type Row } from './lib.js';

const PER_ADD = 100;
const DIMS = 256;

/** A deterministic corpus: 2,000 made-up words, Zipf-like frequencies, 60 words a chunk. */
function corpus(nChunks: number): string[] {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const words = Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
  const pick = () => words[Math.floor(words.length * rand() ** 2)]!;
  return Array.from({ length: nChunks }, () => Array.from({ length: 60 }, pick).join(' '));
}

/** Hashes words onto DIMS axes: cheap, deterministic vectors with overlap between related texts. */
function embedding(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const w of text.split(/\s+/)) v[createHash('md5').update(w).digest().readUInt16LE(0) % DIMS]! += 1;
  return v;
}

async function embeddingServer(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const { input } = JSON.parse(raw) as { input: string[] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: embedding(t) })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function run(label: string, env: Record<string, string>, texts: string[], nQueries: number): Promise<Row[]> {
  const nChunks = texts.length;
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-knowledge-'));
  const d = await startDaemonProcess(home, env);
  try {
    const token = await benchLogin(d.url);
    const auth = { authorization: `Bearer ${token}` };
    // The knowledge base hangs off an agent row: a deploy that need not finish building.
    const src = join(home, 'src');
    execFileSync('mkdir', ['-p', src]);
    writeFileSync(join(src, 'main.py'), 'def handle(event):\n    return {}\n');
    execFileSync('tar', ['-czf', join(home, 'code.tar.gz'), '-C', src, 'main.py']);
    const form = new FormData();
    form.append('name', 'kb');
    form.append('framework', 'function');
    form.append('code', new Blob([readFileSync(join(home, 'code.tar.gz'))]), 'code.tar.gz');
    const dep = await fetch(`${d.url}/v1/agents`, { method: 'POST', headers: auth, body: form });
    if (dep.status !== 202) throw new Error(`deploy: ${dep.status} ${await dep.text()}`);

    const t0 = performance.now();
    for (let i = 0; i < texts.length; i += PER_ADD) {
      const documents = texts.slice(i, i + PER_ADD).map((text, j) => ({ source: `doc-${i + j}.txt`, text }));
      const r = await fetch(`${d.url}/v1/agents/kb/knowledge`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ documents }) });
      if (r.status !== 201) throw new Error(`add: ${r.status} ${await r.text()}`);
    }
    const addMs = performance.now() - t0;

    let q = 0;
    const queries = Array.from({ length: nQueries }, (_, i) => texts[(i * 37) % texts.length]!.split(' ').slice(5, 8).join(' '));
    const times = await samples(nQueries, async () => {
      const r = await fetch(`${d.url}/v1/agents/kb/knowledge?top_k=10&query=${encodeURIComponent(queries[q++ % nQueries]!)}`, { headers: auth });
      const body = (await r.json()) as { results: unknown[]; mode: string };
      if (r.status !== 200 || !body.results.length) throw new Error(`search: ${r.status} ${JSON.stringify(body)}`);
    });
    return [
      { bench: 'knowledge', metric: `search p50 on ${nChunks.toLocaleString('en')} chunks, ${label} (top 10)`, value: `${ms(median(times))} (p95 ${ms(percentile(times, 95))})` },
      { bench: 'knowledge', metric: `add ${nChunks.toLocaleString('en')} chunks, ${label} (${PER_ADD} a request)`, value: ms(addMs) },
    ];
  } finally {
    await stopDaemonProcess(d.pid);
    rmSync(home, { recursive: true, force: true });
  }
}

export async function knowledgeBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const texts = corpus(opts.quick ? 500 : 10_000);
  const queries = opts.quick ? 50 : 200;
  const rows = await run('BM25', {}, texts, queries);
  const stub = await embeddingServer();
  try {
    rows.push(...(await run(`hybrid, ${DIMS} dims`, { PLATFORM_EMBED_BASE_URL: stub.url, PLATFORM_EMBED_MODEL: 'bench-hash' }, texts, queries)));
  } finally {
    stub.close();
  }
  return rows;
}
