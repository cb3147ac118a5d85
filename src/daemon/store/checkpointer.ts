import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from './db.js';
import { sqliteAddonPath } from './sqlite-addon.js';

/**
 * WAL checkpoints off the event loop. SQLite's auto-checkpoint runs inside whichever commit
 * crosses 1000 WAL pages: that commit copies the pages into the database file and fsyncs it, a
 * stall of several milliseconds (tens on a busy disk) for the request that happens to cross.
 * Here the daemon's connection stops auto-checkpointing and a worker thread, on its own
 * connection to the same file, runs PASSIVE checkpoints (which never block the writer or
 * readers) on a short interval.
 *
 * Durability is unchanged: a commit is durable against a process crash once it is in the WAL
 * (synchronous = NORMAL), whether or not it has been checkpointed; the checkpoint only moves
 * pages from the WAL into the database file, and a restart replays whatever it had not moved.
 * The WAL is rewound from its start by the next write after a checkpoint caught up, so it stays
 * small while the worker keeps up; if it ever grows past `maxWalPages` anyway (the worker starved),
 * the daemon's connection checkpoints itself once, as SQLite would have.
 *
 * The worker's code is inline (eval) so the daemon bundle needs no separate file; better-sqlite3
 * is resolved here and passed by absolute path.
 */
export interface Checkpointer {
  stop(): Promise<void>;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file, { fileMustExist: true, nativeBinding: workerData.nativeBinding });
db.pragma('busy_timeout = 0');
db.pragma('wal_autocheckpoint = 0');
let timer;
const tick = () => {
  try {
    // [busy, WAL frames, frames checkpointed]; busy only means another checkpoint was running.
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
    parentPort.postMessage(r.log);
  } catch (e) {
    parentPort.postMessage(String(e && e.message || e));
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearTimeout(timer);
  db.close(); // the daemon's own close checkpoints what is left
  parentPort.close();
});
tick();
`;

export function startCheckpointer(
  db: Db,
  opts: { intervalMs: number; maxWalPages?: number; onError?: (message: string) => void },
): Checkpointer | undefined {
  if (db.memory || opts.intervalMs <= 0) return undefined;
  const maxWalPages = opts.maxWalPages ?? 50_000;
  let worker: Worker;
  try {
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(WORKER, { eval: true, workerData: { file: db.name, sqlite, nativeBinding: sqliteAddonPath(), intervalMs: opts.intervalMs } });
  } catch (e) {
    // No worker: SQLite's own auto-checkpoint stays on; never fail the caller over this.
    opts.onError?.(String(e));
    return undefined;
  }
  db.pragma('wal_autocheckpoint = 0');
  worker.unref();
  let stopped = false;
  let ready = false;
  worker.on('message', (m: number | string) => {
    ready = true;
    if (typeof m === 'string') return opts.onError?.(m);
    // Safety valve: a WAL this large means the worker's passive checkpoints cannot catch up.
    if (m > maxWalPages && !stopped && db.open) db.pragma('wal_checkpoint(PASSIVE)');
  });
  worker.on('error', (e) => opts.onError?.(String(e)));
  // Without the worker (it failed or exited), fall back to SQLite's own auto-checkpoint.
  worker.on('exit', () => {
    if (!stopped && db.open) db.pragma('wal_autocheckpoint = 1000');
  });
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      // A worker still starting has nothing to finish: the daemon's own close checkpoints anyway.
      if (ready) {
        const exited = new Promise<void>((r) => worker.once('exit', () => r()));
        worker.postMessage('stop');
        await Promise.race([exited, new Promise<void>((r) => setTimeout(r, 2000).unref())]);
      }
      await worker.terminate();
      if (db.open) db.pragma('wal_autocheckpoint = 1000');
    },
  };
}
