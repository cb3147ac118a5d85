import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type hnswlib from 'hnswlib-node';
import { GraphBuildWorker } from './graph-build-worker.js';
import type { GraphHold } from './graph-hold.js';

/** How the daemon runs off-thread builds (EngineSettings.offThread). */
export interface OffThreadSettings {
  /** Where seeds and snapshots are written: a directory of the daemon's home, emptied at start. */
  dir: string;
  /** For tests: each worker exits after this many insertions, as a crashed one would. */
  exitAfter?: number;
  /** For tests: each snapshot waits this long between its read and its swap. */
  snapshotDelayMs?: number;
  /** A worker's start is logged as information, its death and the fallback as warnings. */
  info(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
}

/** What the build needs of the float graph it feeds. */
export interface FedGraph {
  /** The searchable graph (main thread). */
  readonly graph: hnswlib.HierarchicalNSW;
  readonly hold: GraphHold;
  /** Swaps in a snapshot; `settled` are the waiting slots it holds, which leave the exact tail. */
  replace(next: hnswlib.HierarchicalNSW, settled: number[]): void;
}

/** A worker that dies is replaced this many times; then the graph is built on the event loop as before. */
const MAX_RESTARTS = 2;
/** A worker with nothing to build is ended after this long, freeing its copy of the graph. */
const IDLE_MS = 5000;

/**
 * The main thread's side of a float graph built by a worker (GraphBuildWorker). Waiting points
 * stay in the hold's exact tail (searched at once) until a snapshot holding them is swapped in.
 * Bookkeeping, all on the event loop and proportional to the points waiting:
 * - `sentIn`: the message each waiting point went out in; a snapshot through message N settles
 *   those of messages up to N.
 * - `removals`: removals sent to the worker since the last swap; those numbered after the
 *   snapshot's N happened after it was taken and are applied to the new graph before it is
 *   searched (a deletion or overwrite is honoured at once, whichever graph answers).
 * A worker is started on demand (seeded from the searchable graph's file, written in the thread
 * pool, or empty) and ended once idle; one that dies takes nothing with it (its points still wait
 * in the tail and go to the next worker; SQLite holds them anyway).
 */
export class OffThreadBuild {
  private worker?: GraphBuildWorker;
  private state: 'idle' | 'seeding' | 'running' | 'failed' | 'closed' = 'idle';
  private readonly toSend = new Map<number, Float32Array>();
  private readonly sentIn = new Map<number, number>();
  private removals: Array<{ seq: number; slot: number }> = [];
  private removedWhileSeeding: number[] = [];
  /** A snapshot read while a save held the graph: swapped in when the save ends. */
  private pending?: { graph: hnswlib.HierarchicalNSW; seq: number };
  private deaths = 0;
  private generation = 0;
  private idleTimer?: NodeJS.Timeout;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly target: FedGraph,
    private readonly s: OffThreadSettings & { space: 'ip' | 'l2'; dims: number; name: string; onAdvance: () => void },
  ) {}

  /** True once workers died too often: the owner builds on the event loop instead. */
  get onEventLoop(): boolean {
    return this.state === 'failed' || this.state === 'closed';
  }

  enqueued(slot: number, v: Float32Array): void {
    if (this.onEventLoop) return;
    this.toSend.set(slot, v);
    clearTimeout(this.idleTimer);
  }

  removed(slot: number): void {
    if (this.toSend.delete(slot)) return;
    this.sentIn.delete(slot);
    if (this.state === 'running') this.removals.push({ seq: this.worker!.remove(slot), slot });
    else if (this.state === 'seeding') this.removedWhileSeeding.push(slot);
  }

  /** Sends the points waiting to go, starting a worker when there is none. */
  flush(): void {
    if (this.toSend.size === 0) return;
    if (this.state === 'idle') this.start();
    if (this.state !== 'running') return;
    const dims = this.s.dims;
    const slots = new Int32Array(this.toSend.size);
    const vectors = new Float32Array(this.toSend.size * dims);
    let i = 0;
    for (const [slot, v] of this.toSend) {
      slots[i] = slot;
      vectors.set(v, i++ * dims);
    }
    // The arrays are transferred (not copied) to the worker.
    const seq = this.worker!.add(slots, vectors);
    for (const slot of this.toSend.keys()) this.sentIn.set(slot, seq);
    this.toSend.clear();
  }

  private start(): void {
    const gen = ++this.generation;
    const name = `${this.s.name}.${gen}`;
    const events = {
      snapshot: (graph: hnswlib.HierarchicalNSW, seq: number) => gen === this.generation && this.onSnapshot(graph, seq),
      died: (reason: string) => gen === this.generation && this.onDeath(reason),
    };
    const opts = { space: this.s.space, dims: this.s.dims, dir: this.s.dir, name, exitAfter: this.s.exitAfter, snapshotDelayMs: this.s.snapshotDelayMs };
    const graph = this.target.graph;
    const seeded = graph.getCurrentCount();
    if (seeded === 0) {
      this.worker = new GraphBuildWorker(opts, { capacity: graph.getMaxElements() }, events);
      this.state = 'running';
      this.s.info('vector graph build worker started', { seeded: 0, sending: this.toSend.size });
      return;
    }
    // A save is writing the graph: its end resumes the build (the runtime builds after each save).
    if (this.target.hold.isHeld) return;
    this.state = 'seeding';
    const path = join(this.s.dir, `${name}.seed.hnsw`);
    // The graph is held still while the thread pool writes it; points and removals wait meanwhile.
    const release = this.target.hold.begin({ keepWaiting: true });
    graph.writeIndex(path).then(
      () => {
        release();
        if (gen !== this.generation) return void rmSync(path, { force: true });
        this.worker = new GraphBuildWorker(opts, { path }, events);
        this.state = 'running';
        this.s.info('vector graph build worker started', { seeded, sending: this.toSend.size });
        for (const slot of this.removedWhileSeeding) this.removals.push({ seq: this.worker.remove(slot), slot });
        this.removedWhileSeeding = [];
        this.flush();
      },
      (e: unknown) => {
        release();
        rmSync(path, { force: true });
        if (gen === this.generation) this.onDeath(`its seed was not written: ${String(e)}`);
      },
    );
  }

  private onSnapshot(graph: hnswlib.HierarchicalNSW, seq: number): void {
    // A save is reading the searchable graph: it stays until the save ends (snapshots are cumulative).
    if (this.target.hold.isHeld) this.pending = { graph, seq };
    else this.swap(graph, seq);
  }

  /** Swaps in a snapshot that waited out a save (the owner calls this when the save releases the graph). */
  applyPending(): void {
    const p = this.pending;
    this.pending = undefined;
    if (p && !this.target.hold.isHeld) this.swap(p.graph, p.seq);
    else if (p) this.pending = p;
  }

  private swap(graph: hnswlib.HierarchicalNSW, seq: number): void {
    for (const r of this.removals) {
      if (r.seq <= seq) continue;
      try {
        graph.markDelete(r.slot);
      } catch {
        // Not in this snapshot (sent after it) or already deleted by the worker.
      }
    }
    this.removals = this.removals.filter((r) => r.seq > seq);
    const settled: number[] = [];
    for (const [slot, s] of this.sentIn) if (s <= seq) settled.push(slot);
    for (const slot of settled) this.sentIn.delete(slot);
    this.target.replace(graph, settled);
    this.afterProgress();
  }

  private afterProgress(): void {
    if (this.target.hold.waitingCount === 0 || this.onEventLoop) {
      for (const w of this.waiters.splice(0)) w();
    }
    if (this.state === 'running' && this.target.hold.waitingCount === 0 && this.toSend.size === 0) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => this.endIdle(), IDLE_MS);
      this.idleTimer.unref();
    }
    this.s.onAdvance();
  }

  private endIdle(): void {
    if (this.state !== 'running' || this.target.hold.waitingCount > 0 || this.toSend.size > 0) return;
    this.stopWorker('idle');
  }

  private stopWorker(next: 'idle' | 'closed'): void {
    this.generation++;
    this.worker?.close();
    this.worker = undefined;
    this.state = next;
    this.removals = [];
    this.removedWhileSeeding = [];
    this.pending = undefined;
    this.sentIn.clear();
  }

  private onDeath(reason: string): void {
    this.generation++;
    this.worker = undefined;
    this.pending = undefined;
    this.removals = [];
    this.removedWhileSeeding = [];
    this.sentIn.clear();
    this.deaths++;
    const waiting = this.target.hold.waitingCount;
    if (this.deaths > MAX_RESTARTS) {
      this.state = 'failed';
      this.toSend.clear();
      this.s.warn('vector graph build worker died; building on the event loop from now on', { reason, waiting, deaths: this.deaths });
    } else {
      this.state = 'idle';
      // The next worker starts from the searchable graph: every point still waiting goes to it.
      for (const [slot, v] of this.target.hold.waitingEntries()) this.toSend.set(slot, v);
      this.s.warn('vector graph build worker died; starting another', { reason, waiting, deaths: this.deaths });
    }
    this.afterProgress();
  }

  /** Settles once every point sent is in the searchable graph, or the build fell back to the event loop. */
  whenBuilt(): Promise<void> {
    this.flush();
    if (this.target.hold.waitingCount === 0 || this.onEventLoop) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    clearTimeout(this.idleTimer);
    this.stopWorker('closed');
    this.toSend.clear();
    for (const w of this.waiters.splice(0)) w();
  }
}
