import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { IndexEngine } from './engine.js';
import { GraphSaves } from './graph-saves.js';
import { PointWriter } from './point-writer.js';
import { toBlob } from './scoring.js';
import { BUMP_WRITE_SEQ_SQL, UPSERT_POINT_SQL, VectorStore, type IndexRow } from './store.js';
import { tx } from '../../store/db.js';

/**
 * The graph is built (filled at start, and fed the points upserts leave beside it) in slices this
 * long between which the event loop runs, so a search or an acknowledgement waits at most about
 * this much behind it (one insertion into a dense 768-d graph takes a few milliseconds).
 */
const BUILD_SLICE_MS = 5;
/**
 * A graph is saved once the insertions and removals a restart would redo (and the save would spare:
 * points still waiting beside the graph are not in it) reach 10 % of its points
 * (at least 1,000): a save writes the whole graph, so its cost stays proportional to the work it
 * spares. Shutdown saves every graph that changed.
 */
const saveDue = (engine: IndexEngine) =>
  engine.changes - engine.waiting >= Math.max(1000, engine.size * 0.1) ||
  // A save taken mid-build left the queue out: once the graph has caught up, the whole one is saved.
  (engine.lastSaveLeftOut && engine.graphComplete && engine.changes > 0);

/**
 * PLATFORM_VECTOR_TEST_BUILD_WORKER_EXIT_AFTER=n, for tests only: every graph build worker exits
 * after n insertions, as a crashed one would (the daemon restarts it, then builds on the event loop).
 * Read here rather than in the daemon's config: a test hook of this area alone.
 */
const TEST_BUILD_WORKER_EXIT_AFTER = Number(process.env.PLATFORM_VECTOR_TEST_BUILD_WORKER_EXIT_AFTER) || undefined;
/**
 * PLATFORM_VECTOR_TEST_BUILD_SNAPSHOT_DELAY_MS=n, for tests only: a build worker's snapshot waits n ms
 * between its read and its swap, so a test can delete and overwrite points in between.
 */
const TEST_BUILD_SNAPSHOT_DELAY_MS = Number(process.env.PLATFORM_VECTOR_TEST_BUILD_SNAPSHOT_DELAY_MS) || undefined;
/**
 * PLATFORM_VECTOR_TEST_POINT_WRITER_EXIT_AFTER=n, for tests only: the point writer's thread ends after its
 * n-th commit, before answering it (the daemon commits that batch again and then commits on the event loop).
 */
const TEST_POINT_WRITER_EXIT_AFTER = Number(process.env.PLATFORM_VECTOR_TEST_POINT_WRITER_EXIT_AFTER) || undefined;
/**
 * PLATFORM_VECTOR_TEST_POINT_WRITER_REPLY_DELAY_MS=n, for tests only: the point writer answers each commit
 * n ms late, so a test can write on the daemon's connection between a commit and its application.
 */
const TEST_POINT_WRITER_REPLY_DELAY_MS = Number(process.env.PLATFORM_VECTOR_TEST_POINT_WRITER_REPLY_DELAY_MS) || undefined;

/**
 * Live state of the vector area: the store, one engine per ready index, the readiness timers of
 * pending indexes and the periodic count refresh (spec 3 §2.1: counts lag writes by design).
 */
export class VectorRuntime {
  readonly store: VectorStore;
  /** Commits upsert batches off the event loop (point-writer.ts); other point writes call settleWrites() first. */
  readonly writer: PointWriter;
  private engines = new Map<string, IndexEngine>();
  private readyTimers = new Map<string, NodeJS.Timeout>();
  private countTimer?: NodeJS.Timeout;
  private loadTimer?: NodeJS.Timeout;
  private saveTimer?: NodeJS.Timeout;
  private readonly saves: GraphSaves;
  private saving = new Map<string, Promise<void>>();
  /** Engines whose graph build is scheduled: one chain of slices each. */
  private building = new Set<IndexEngine>();
  /** True between start() and stop(): health reports the engine and scheduler down otherwise. */
  running = false;
  /** Seeds and snapshots of graphs built by worker threads (off-thread-build.ts); emptied at start. */
  private readonly buildDir: string;

  constructor(readonly ctx: AreaContext) {
    this.store = new VectorStore(ctx.db);
    this.saves = new GraphSaves(join(ctx.config.home, 'vector'));
    this.buildDir = join(ctx.config.home, 'vector-build');
    this.writer = new PointWriter(
      ctx.db,
      { bump: BUMP_WRITE_SEQ_SQL, upsert: UPSERT_POINT_SQL },
      (b) => {
        const size = b.vectors.length / b.keys.length;
        const rows = b.keys.map((id_key, i) => ({ id_key, vector: toBlob(b.vectors.subarray(i * size, (i + 1) * size)), payload: b.payloads[i]! }));
        tx(ctx.db, () => this.store.upsertPoints(b.indexId, rows));
      },
      { exitAfter: TEST_POINT_WRITER_EXIT_AFTER, replyDelayMs: TEST_POINT_WRITER_REPLY_DELAY_MS, warn: (message, fields) => ctx.log.warn(message, fields) },
    );
  }

  /**
   * Before any write to an index's points on the daemon's connection: the upsert batches the point
   * writer has in flight are committed and applied first, so SQLite and the engines see writes in
   * the same order (point-writer.ts).
   */
  settleWrites(): void {
    this.writer.settle();
  }

  /** Starts timers: pending indexes become ready, engines rebuild in the background, counts refresh. */
  start(): void {
    this.running = true;
    // Files of builds a stopped or killed daemon left behind: a build starts from the graph in memory.
    rmSync(this.buildDir, { recursive: true, force: true });
    mkdirSync(this.buildDir, { recursive: true, mode: 0o700 });
    const rows = this.store.allIndexes();
    this.saves.prune(new Set(rows.map((r) => r.id)));
    for (const r of rows) if (r.state === 'pending') this.scheduleReady(r.id);
    const toLoad = rows.filter((r) => r.state === 'ready').map((r) => r.id);
    const loaded = this.ctx.startup.track('vector indexes', toLoad.length);
    // Load one index per tick so the listener answers meanwhile; a data call for an index not yet
    // loaded loads it on the spot.
    const next = () => {
      const id = toLoad.shift();
      if (!id) return;
      const row = this.store.indexById(id);
      if (row) this.engine(row);
      loaded();
      this.loadTimer = setTimeout(next, 0);
    };
    this.loadTimer = setTimeout(next, 0);
    this.countTimer = setInterval(() => this.refreshCounts(), this.ctx.config.vector.countRefreshMs);
    this.countTimer.unref();
    this.saveTimer = setInterval(() => void this.saveGraphs(false), Math.max(100, this.ctx.config.vector.graphSaveMs));
    this.saveTimer.unref();
  }

  /** Saves whole graphs that changed enough since their last save (`all`: any change, at shutdown). */
  async saveGraphs(all: boolean): Promise<void> {
    const runs: Array<Promise<void>> = [];
    for (const [id, engine] of this.engines) {
      const due = all ? engine.changes - engine.waiting > 0 : saveDue(engine);
      // A save records the index's write sequence: none while a committed batch may not be in the engine yet.
      if (due && engine.canSave && !this.writer.busy(id)) runs.push(this.save(id, engine));
    }
    await Promise.all(runs);
  }

  /** One save per index at a time: a save asked for while one runs joins it. */
  private save(id: string, engine: IndexEngine): Promise<void> {
    const running = this.saving.get(id);
    if (running) return running;
    const started = performance.now();
    // What the save holds: points still waiting beside the graph are left out of it.
    const points = engine.size - engine.waiting;
    const pending = this.saves.save(id, engine, this.store.writeSeq(id));
    // The save's synchronous start (the keys copied, the graph held); its writes then run in the thread pool.
    const blockedMs = Math.round(performance.now() - started);
    const run = pending
      .then(
        (saved) => {
          if (saved) {
            this.ctx.log.info('vector graph saved', { index: id, points, ms: Math.round(performance.now() - started), blocked_ms: blockedMs });
          }
        },
        (e: unknown) => {
          // The graph stays usable: a failed save only costs a rebuild on the next start.
          if (this.engines.get(id) === engine) this.ctx.log.warn('vector graph save failed', { index: id, error: String(e) });
        },
      )
      .finally(() => {
        this.saving.delete(id);
        // The index was deleted while its save was on the way to disk.
        if (this.engines.get(id) !== engine) this.saves.remove(id);
        // Points upserted during the write waited beside the held graph.
        else this.build(id, engine);
      });
    this.saving.set(id, run);
    return run;
  }

  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.saveTimer);
    clearTimeout(this.loadTimer);
    for (const t of this.readyTimers.values()) clearTimeout(t);
    this.readyTimers.clear();
    clearInterval(this.countTimer);
    // Every acknowledged batch is in the engines before the last saves.
    await this.writer.stop();
    await Promise.all(this.saving.values());
    // Requests have stopped: finish the graphs so the next start loads them whole (green at once). A
    // stop cut short by SIGKILL (the CLI waits 10 s) loses no point: the next start reinserts what the
    // last save lacks from SQLite.
    if (!this.ctx.config.vector.pauseGraphBuild) await Promise.all([...this.engines.values()].map((engine) => engine.finishGraph()));
    await this.saveGraphs(true);
    for (const engine of this.engines.values()) engine.close();
    this.engines.clear();
  }

  /** The collection is created asynchronously after a configurable delay (spec 3 §3). */
  scheduleReady(id: string): void {
    const t = setTimeout(() => {
      this.readyTimers.delete(id);
      const row = this.store.indexById(id);
      if (!row || row.state !== 'pending') return;
      this.engines.set(id, this.newEngine(row));
      this.store.updateIndex(id, { state: 'ready', message: null });
      this.store.refreshCounts(id, isoNow(this.ctx.clock));
    }, this.ctx.config.vector.readyDelayMs);
    t.unref();
    this.readyTimers.set(id, t);
  }

  /** Names (project/name) of indexes pending for longer than `olderThanMs` by the area clock. */
  stuckPending(olderThanMs: number): string[] {
    const cutoff = this.ctx.clock.now() - olderThanMs;
    return this.store
      .allIndexes()
      .filter((r) => r.state === 'pending' && Date.parse(r.created_at) < cutoff)
      .map((r) => r.name);
  }

  refreshCounts(): void {
    const now = isoNow(this.ctx.clock);
    for (const r of this.store.allIndexes()) this.store.refreshCounts(r.id, now);
  }

  private newEngine(row: IndexRow): IndexEngine {
    const engine: IndexEngine = new IndexEngine(
      {
        id: row.id,
        dims: row.dimensions,
        distance: row.distance,
        quantization: row.q_kind,
        quantile: row.q_quantile ? Number(row.q_quantile) : undefined,
        payloadOnDisk: Boolean(row.payload_on_disk),
        // Acknowledged writes are committed and searchable (exactly) at once; the graph catches up here.
        buildInBackground: true,
        onPending: () => this.build(row.id, engine),
        // Float graphs are built by a worker thread; the event loop only swaps in its snapshots.
        offThread: {
          dir: this.buildDir,
          exitAfter: TEST_BUILD_WORKER_EXIT_AFTER,
          snapshotDelayMs: TEST_BUILD_SNAPSHOT_DELAY_MS,
          info: (message, fields) => this.ctx.log.info(message, { index: row.id, ...fields }),
          warn: (message, fields) => this.ctx.log.warn(message, { index: row.id, ...fields }),
        },
      },
      this.store,
      // The planner settings are a subset of the area config.
      this.ctx.config.vector,
    );
    return engine;
  }

  /**
   * Builds an engine's graph in slices of about BUILD_SLICE_MS until nothing is left that can be
   * inserted now (a save holding the graph resumes it when it ends), then saves it if due.
   */
  private build(id: string, engine: IndexEngine): void {
    if (this.building.has(engine) || this.ctx.config.vector.pauseGraphBuild) return;
    this.building.add(engine);
    const step = () => {
      // stop() and drop() unregister the engine, which ends its build.
      if (this.engines.get(id) !== engine) return void this.building.delete(engine);
      if (engine.buildGraph(BUILD_SLICE_MS)) return void setImmediate(step);
      this.building.delete(engine);
      if (engine.graphComplete && saveDue(engine)) void this.save(id, engine);
    };
    // After the current request: its acknowledgement goes out before the first slice.
    setImmediate(step);
  }

  /**
   * The engine of a ready index, loaded on first use after a start: keys and payloads at once,
   * the graph from its save when there is one, and what the save lacks in slices of about
   * BUILD_SLICE_MS between which the event loop runs, so a large index neither blocks the daemon
   * nor answers from a partial graph (the engine scans exactly until its graph is whole).
   */
  engine(row: IndexRow): IndexEngine {
    const existing = this.engines.get(row.id);
    if (existing) return existing;
    const engine = this.loadEngine(row);
    this.engines.set(row.id, engine);
    this.build(row.id, engine);
    return engine;
  }

  /**
   * A new engine for a ready index, started from its saved graph when there is a usable one;
   * otherwise (none, unreadable, or not fitting the rows) from SQLite alone.
   */
  private loadEngine(row: IndexRow): IndexEngine {
    try {
      const saved = this.saves.load(row);
      if (saved) {
        const engine = this.newEngine(row);
        engine.beginLoad(saved);
        this.ctx.log.info('vector graph loaded from its save', {
          index: row.id,
          kept: engine.size - engine.pendingFill,
          reinserting: engine.pendingFill,
          removed: engine.changes,
        });
        return engine;
      }
    } catch (e) {
      this.ctx.log.warn('vector graph save unusable, rebuilding from the database', { index: row.id, error: String(e) });
    }
    const engine = this.newEngine(row);
    engine.beginLoad();
    return engine;
  }

  /** False while a ready index waits for its start-up load or its graph is still filling. */
  graphComplete(id: string): boolean {
    return this.engines.get(id)?.graphComplete ?? false;
  }

  drop(id: string): void {
    clearTimeout(this.readyTimers.get(id));
    this.readyTimers.delete(id);
    const engine = this.engines.get(id);
    if (engine) {
      this.building.delete(engine);
      engine.close();
    }
    this.engines.delete(id);
    this.saves.remove(id);
  }
}
