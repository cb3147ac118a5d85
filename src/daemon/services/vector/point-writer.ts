import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Db } from '../../store/db.js';
import { sqliteAddonPath } from '../../store/sqlite-addon.js';

/**
 * The commits of upsert batches, off the event loop. A batch of 256 x 768 is about 800 KB of
 * blobs: its transaction held the event loop 8-25 ms (a third of the loop's work per batch), and
 * a search arriving meanwhile waited. Here a worker thread commits each batch on its own
 * connection to the same file (WAL, synchronous = NORMAL, as the daemon's: a commit is durable
 * against a process crash once it returns), and the event loop applies the batch to the engine
 * when the commit is reported, before the answer. So "acknowledged" still means committed and
 * searchable at once.
 *
 * Order. SQLite and the engine must see the same writes in the same order. One thread commits
 * every batch, in the order sent, and the replies are applied in that order. A write on the
 * daemon's own connection (a delete, a payload change, an upsert of the other routes, an index
 * drop) first calls `settle()`, which waits, synchronously, for the batches in flight and applies
 * them: without it, a delete committed after a batch's commit but applied before it would leave
 * the point in SQLite and out of the engine. Those writes are rare during a burst, and the wait is
 * at most the commits in flight.
 *
 * A writer that dies (or hangs past `SETTLE_TIMEOUT_MS`) is replaced by the event loop for good:
 * the batches it had not answered are committed again on the daemon's connection, in order (an
 * upsert rewritten with the same rows is the same rows; only the index's write sequence moves on),
 * applied, and answered; so a batch is never acknowledged uncommitted, nor committed and left out of
 * the engine.
 *
 * The worker's code is inline (eval), as the checkpointer's, so the daemon bundle needs no file.
 */
const WORKER = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const { port, signal, exitAfter, replyDelayMs } = workerData;
// Per thread on Linux (0 names the calling one): the event loop's requests go first, as for the parsers.
try { require('node:os').setPriority(0, workerData.nice); } catch {}
// Whatever ends the thread, a synchronous settle() waiting on the signal must not wait out its timeout.
process.on('exit', () => { Atomics.store(signal, 1, 1); Atomics.add(signal, 0, 1); Atomics.notify(signal, 0); });
const db = new Database(workerData.file, { fileMustExist: true, nativeBinding: workerData.nativeBinding });
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
const bump = db.prepare(workerData.bumpSql);
const put = db.prepare(workerData.upsertSql);
const write = db.transaction((m) => {
  const row = bump.get(m.indexId);
  if (!row) throw new Error('index ' + m.indexId + ' is gone');
  const bytes = Buffer.from(m.vectors.buffer, m.vectors.byteOffset, m.vectors.byteLength);
  const size = m.vectors.byteLength / m.keys.length;
  for (let i = 0; i < m.keys.length; i++) put.run(m.indexId, m.keys[i], bytes.subarray(i * size, (i + 1) * size), m.payloads[i], row.write_seq);
});
let commits = 0;
port.on('message', (m) => {
  if (m === 'stop') { db.close(); port.close(); return; }
  let error;
  try { write.immediate(m); } catch (e) { error = String((e && e.message) || e); }
  // Test hook: the thread ends after this commit and before its answer, the worst moment.
  if (exitAfter && ++commits >= exitAfter) process.exit(1);
  // Test hook: committed, answered late, so a test can write on the daemon's connection in between.
  if (replyDelayMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, replyDelayMs);
  port.postMessage({ seq: m.seq, error });
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
});
`;

/** What the worker commits: an index's rows, the vectors as one float32 array in the rows' order. */
export interface PointBatch {
  indexId: string;
  keys: string[];
  vectors: Float32Array;
  payloads: string[];
}

interface InFlight {
  seq: number;
  indexId: string;
  /** The batch again, for a commit here (its first vectors went to the writer). */
  batch: () => PointBatch;
  /** Applies the committed batch to the engine (synchronously, in commit order). */
  apply: () => void;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** How long a synchronous settle() waits for a writer that neither answers nor ends: then it is given up. */
const SETTLE_TIMEOUT_MS = 10_000;
/** Below the event loop, like the upsert parsers (the acknowledgement waits for both). */
const WRITER_NICE = 5;

export class PointWriter {
  private worker?: Worker;
  private port?: MessagePort;
  /** [replies posted, ended]: what a synchronous settle() waits on. */
  private readonly signal = new Int32Array(new SharedArrayBuffer(8));
  private readonly inFlight = new Map<number, InFlight>();
  private seq = 0;
  private broken = false;

  constructor(
    private readonly db: Db,
    private readonly sql: { bump: string; upsert: string },
    /** Commits a batch on the daemon's connection (the fallback; also the redo of unanswered batches). */
    private readonly commitHere: (b: PointBatch) => void,
    private readonly opts: { exitAfter?: number; replyDelayMs?: number; warn: (message: string, fields?: Record<string, unknown>) => void },
  ) {}

  /** False once the writer is given up (or cannot run: an in-memory database): callers commit themselves. */
  get available(): boolean {
    return !this.broken && !this.db.memory;
  }

  /** Whether batches of the index are between their send and their application. */
  busy(indexId: string): boolean {
    for (const b of this.inFlight.values()) if (b.indexId === indexId) return true;
    return false;
  }

  private start(): MessagePort | undefined {
    if (this.port) return this.port;
    try {
      const { port1, port2 } = new MessageChannel();
      const worker = new Worker(WORKER, {
        eval: true,
        workerData: {
          sqlite: createRequire(import.meta.url).resolve('better-sqlite3'),
          nativeBinding: sqliteAddonPath(),
          file: this.db.name,
          port: port2,
          signal: this.signal,
          bumpSql: this.sql.bump,
          upsertSql: this.sql.upsert,
          exitAfter: this.opts.exitAfter ?? 0,
          replyDelayMs: this.opts.replyDelayMs ?? 0,
          nice: WRITER_NICE,
        },
        transferList: [port2],
      });
      worker.unref();
      port1.on('message', (r: { seq: number; error?: string }) => this.finish(r));
      // The daemon's stop ends the writer; neither may keep the process alive by itself.
      port1.unref();
      worker.on('error', (e) => this.giveUp(`failed: ${String(e)}`));
      worker.on('exit', (code) => this.giveUp(`exited with code ${code}`));
      this.worker = worker;
      this.port = port1;
      return port1;
    } catch (e) {
      this.giveUp(`could not start: ${String(e)}`);
      return undefined;
    }
  }

  /**
   * Commits a batch off the event loop; `apply` runs once it is committed, before the promise
   * resolves (or at a settle() meanwhile). Without a writer the batch is committed here at once.
   * `batch` builds the rows (called again if the writer dies before answering: its vectors are
   * transferred, not copied).
   */
  commit(indexId: string, batch: () => PointBatch, apply: () => void): Promise<void> {
    const port = this.available ? this.start() : undefined;
    if (!port) {
      this.commitHere(batch());
      apply();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const seq = ++this.seq;
      this.inFlight.set(seq, { seq, indexId, batch, apply, resolve, reject });
      const { keys, vectors, payloads } = batch();
      port.postMessage({ seq, indexId, keys, vectors, payloads }, [vectors.buffer as ArrayBuffer]);
    });
  }

  private finish(r: { seq: number; error?: string }): void {
    const b = this.inFlight.get(r.seq);
    if (!b) return;
    this.inFlight.delete(r.seq);
    if (r.error !== undefined) return b.reject(new Error(`vector point commit failed: ${r.error}`));
    b.apply();
    b.resolve();
  }

  /** Takes the replies already posted (in order) without waiting for the event loop's turn. */
  private drainReplies(): boolean {
    let any = false;
    for (let m = this.port && receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port!)) {
      this.finish(m.message as { seq: number; error?: string });
      any = true;
    }
    return any;
  }

  /**
   * Waits, blocking the event loop, until every batch sent is committed and applied. Called before
   * any other write to the points (see the class comment); returns at once when none is in flight.
   */
  settle(): void {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    while (this.inFlight.size > 0) {
      const seen = Atomics.load(this.signal, 0);
      if (this.drainReplies()) continue;
      if (Atomics.load(this.signal, 1) === 1) return this.giveUp('ended');
      if (Date.now() > deadline) return this.giveUp(`did not answer within ${SETTLE_TIMEOUT_MS} ms`);
      Atomics.wait(this.signal, 0, seen, 200);
    }
  }

  /** Resolves once nothing is in flight (a stop; a shutdown save must see every acknowledged point). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) {
      const last = [...this.inFlight.values()].pop()!;
      await new Promise<void>((r) => {
        const { resolve, reject } = last;
        last.resolve = () => (resolve(), r());
        last.reject = (e) => (reject(e), r());
      });
    }
  }

  /**
   * The writer is gone or stuck: its answered batches are applied, the others committed here and
   * applied in order, and every later batch is committed on the event loop.
   */
  private giveUp(reason: string): void {
    if (this.broken) return;
    this.drainReplies();
    this.broken = true;
    void this.worker?.terminate();
    const left = [...this.inFlight.values()];
    this.inFlight.clear();
    this.opts.warn('vector point writer stopped; commits run on the event loop', { reason, redone: left.length });
    for (const b of left) {
      try {
        this.commitHere(b.batch());
      } catch (e) {
        b.reject(e instanceof Error ? e : new Error(String(e)));
        continue;
      }
      b.apply();
      b.resolve();
    }
  }

  async stop(): Promise<void> {
    // Unreferenced, the thread would let the process end in the middle of the daemon's stop (the
    // listener is closed by then): the last commits' answers and the graph saves after them must run.
    this.worker?.ref();
    await this.idle();
    if (this.broken || !this.worker) return void (this.broken = true);
    const worker = this.worker;
    this.broken = true;
    const exited = new Promise<void>((r) => worker.once('exit', () => r()));
    this.port!.postMessage('stop');
    await Promise.race([exited, new Promise<void>((r) => setTimeout(r, 2000))]);
    await worker.terminate();
  }
}
