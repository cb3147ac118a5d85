import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import hnswlib from 'hnswlib-node';
import { FLOAT_GRAPH } from './graph-params.js';

/**
 * The worker that builds a float (hnswlib) graph off the event loop. It owns a build copy of the
 * graph: seeded from the searchable graph's file (or empty), it inserts the points the main thread
 * sends (one message per flushed batch, numbered), applies the removals sent after them, and now
 * and then writes the whole graph to a file (a snapshot) that the main thread reads in the thread
 * pool and swaps in. A snapshot holds whole messages only (it is taken between two messages'
 * points), so the main thread knows which waiting points it holds: those of messages up to its
 * number. At most one snapshot is on its way at a time (the main thread acknowledges each), so
 * the memory is the two graphs plus one being read.
 *
 * The code is inline (eval), as the upsert parser's, so the daemon bundle needs no file; hnswlib
 * is required by the path the main thread resolved.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { rmSync } = require('node:fs');
const { HierarchicalNSW } = require(workerData.hnswlib);
const { space, dims, m, efConstruction, snapshotPrefix, exitAfter, sliceMs, snapshotMin, snapshotShare, nice } = workerData;
// Linux keeps a nice value per thread: this lowers the build's thread alone, so requests go first.
try { require('node:os').setPriority(0, nice); } catch {}
const index = new HierarchicalNSW(space, dims);
if (workerData.seedPath) {
  index.readIndexSync(workerData.seedPath);
  rmSync(workerData.seedPath, { force: true });
} else index.initIndex({ maxElements: workerData.capacity, m, efConstruction, randomSeed: 42 });
let capacity = index.getMaxElements();
// Points to insert, in message order; a removed one stays in place, flagged.
let queue = [];
let head = 0;
const queued = new Map();
let received = 0;
let lastSeq = 0;
let sinceSnapshot = 0;
let inserted = 0;
let acknowledged = true;
let snapshots = 0;
let scheduled = false;
parentPort.on('message', (msg) => {
  if (msg.type === 'add') {
    for (let i = 0; i < msg.slots.length; i++) {
      const e = { slot: msg.slots[i], v: msg.vectors.subarray(i * dims, (i + 1) * dims), seq: msg.seq, removed: false };
      queue.push(e);
      queued.set(e.slot, e);
    }
    received = msg.seq;
  } else if (msg.type === 'remove') {
    const e = queued.get(msg.slot);
    if (e) {
      e.removed = true;
      queued.delete(msg.slot);
    } else {
      // Unknown here (never sent) or deleted already: nothing to do.
      try { index.markDelete(msg.slot); } catch {}
    }
    received = msg.seq;
  } else if (msg.type === 'loaded') acknowledged = true;
  schedule();
});
function schedule() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(work);
}
const atBoundary = () => head === queue.length || queue[head].seq !== lastSeq;
const due = () => sinceSnapshot >= Math.max(snapshotMin, index.getCurrentCount() * snapshotShare);
function work() {
  scheduled = false;
  const started = performance.now();
  while (head < queue.length) {
    if (acknowledged && due() && atBoundary()) break;
    const e = queue[head++];
    lastSeq = e.seq;
    if (e.removed) continue;
    queued.delete(e.slot);
    if (e.slot >= capacity) {
      while (capacity <= e.slot) capacity = Math.ceil(capacity * 1.25);
      index.resizeIndex(capacity);
    }
    index.addPoint(Array.from(e.v), e.slot);
    sinceSnapshot++;
    if (exitAfter && ++inserted >= exitAfter) process.exit(1);
    if (performance.now() - started >= sliceMs) break;
  }
  if (head === queue.length) {
    queue = [];
    head = 0;
  }
  if (acknowledged && sinceSnapshot > 0 && atBoundary() && (head === queue.length || due())) snapshot();
  if (head < queue.length) schedule();
}
function snapshot() {
  // Every message before the next point's is done (its points inserted, removals applied on receipt).
  const seq = head === queue.length ? received : queue[head].seq - 1;
  const path = snapshotPrefix + ++snapshots + '.hnsw';
  index.writeIndexSync(path);
  acknowledged = false;
  sinceSnapshot = 0;
  parentPort.postMessage({ type: 'snapshot', path, seq });
}
parentPort.postMessage({ type: 'ready' });
`;

/** A batch of points sent to the worker, or a removal; numbered in the order they are posted. */
type Outgoing = { type: 'add'; seq: number; slots: Int32Array; vectors: Float32Array } | { type: 'remove'; seq: number; slot: number };

export interface BuildWorkerEvents {
  /** A snapshot read into a new graph, holding every message up to `seq`. */
  snapshot(graph: hnswlib.HierarchicalNSW, seq: number): void;
  /** The worker ended without being asked to (an error, or exited): its copy is lost. */
  died(reason: string): void;
}

export interface BuildWorkerOptions {
  space: 'ip' | 'l2';
  dims: number;
  /** Where seeds and snapshots are written (their names start with `name`). */
  dir: string;
  name: string;
  /** For tests: the worker exits after this many insertions, as a crashed one would. */
  exitAfter?: number;
  /** For tests: a snapshot read waits this long before it is swapped in (so writes land in between). */
  snapshotDelayMs?: number;
}

/**
 * Worker thread tuning. Slices only bound how long the worker goes without reading its messages
 * (removals, acknowledgements); the main thread never waits on them. A snapshot is taken when the
 * worker's queue empties, or after inserting 10 % of the graph (at least 1,000 points): its cost
 * (writing and reading the whole graph, both off the event loop; 10,000 x 768 took 123 + 63 ms)
 * stays a small share of the insertions it hands over, about 4.5 ms each.
 */
const WORKER_SLICE_MS = 20;
const SNAPSHOT_MIN = 1000;
const SNAPSHOT_SHARE = 0.1;
/**
 * The build thread's nice value. The build is background work: at the same priority it took a
 * whole core from the event loop and the upsert parsers on this 2-core machine (acknowledgements
 * fell, a bare /healthz waited 5x longer). At 10 the scheduler gives it about a tenth of a
 * contended core and all of an idle one.
 */
const WORKER_NICE = 10;

const hnswlibPath = () => createRequire(import.meta.url).resolve('hnswlib-node');

/** One build worker: its thread, the messages to it, and the snapshots it hands back. */
export class GraphBuildWorker {
  private readonly worker: Worker;
  private seq = 0;
  private ended = false;
  private readonly prefix: string;

  constructor(
    private readonly opts: BuildWorkerOptions,
    seed: { path: string } | { capacity: number },
    private readonly events: BuildWorkerEvents,
  ) {
    this.prefix = join(opts.dir, `${opts.name}.`);
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        hnswlib: hnswlibPath(),
        space: opts.space,
        dims: opts.dims,
        ...FLOAT_GRAPH,
        ...('path' in seed ? { seedPath: seed.path } : { capacity: seed.capacity }),
        snapshotPrefix: this.prefix,
        exitAfter: opts.exitAfter ?? 0,
        sliceMs: WORKER_SLICE_MS,
        snapshotMin: SNAPSHOT_MIN,
        snapshotShare: SNAPSHOT_SHARE,
        nice: WORKER_NICE,
      },
    });
    // The daemon's stop ends the worker; it must not keep the process alive by itself.
    this.worker.unref();
    this.worker.on('message', (m: { type: string; path?: string; seq?: number }) => {
      if (m.type === 'snapshot') void this.readSnapshot(m.path!, m.seq!);
    });
    this.worker.on('error', (e) => this.die(String(e)));
    this.worker.on('exit', (code) => this.die(`exited with code ${code}`));
  }

  /** Sends points to insert; returns the number of their message. */
  add(slots: Int32Array, vectors: Float32Array): number {
    const msg: Outgoing = { type: 'add', seq: ++this.seq, slots, vectors };
    this.worker.postMessage(msg, [slots.buffer as ArrayBuffer, vectors.buffer as ArrayBuffer]);
    return msg.seq;
  }

  /** Sends a removal; returns its number. */
  remove(slot: number): number {
    const msg: Outgoing = { type: 'remove', seq: ++this.seq, slot };
    this.worker.postMessage(msg);
    return msg.seq;
  }

  /** Reads a snapshot into a new graph in the thread pool; the event loop only swaps it in. */
  private async readSnapshot(path: string, seq: number): Promise<void> {
    const graph = new hnswlib.HierarchicalNSW(this.opts.space, this.opts.dims);
    try {
      await graph.readIndex(path);
    } catch (e) {
      // A snapshot is cumulative: the next one holds these points too.
      if (!this.ended) this.worker.postMessage({ type: 'loaded' });
      rmSync(path, { force: true });
      return;
    }
    rmSync(path, { force: true });
    if (this.opts.snapshotDelayMs) await new Promise((r) => setTimeout(r, this.opts.snapshotDelayMs));
    if (this.ended) return;
    this.events.snapshot(graph, seq);
    this.worker.postMessage({ type: 'loaded' });
  }

  private die(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.removeFiles();
    this.events.died(reason);
  }

  /** Ends the worker (asked for: no `died` event) and removes its files. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    void this.worker.terminate().finally(() => this.removeFiles());
  }

  private removeFiles(): void {
    // A snapshot written and not yet read, or a seed the worker died before reading. The directory
    // may be gone already (a stopped daemon's home removed): nothing is left to clean then.
    let files: string[];
    try {
      files = readdirSync(this.opts.dir);
    } catch {
      return;
    }
    for (const f of files) if (f.startsWith(`${this.opts.name}.`)) rmSync(join(this.opts.dir, f), { force: true });
  }
}
