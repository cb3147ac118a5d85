import { existsSync, lstatSync, mkdirSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join, sep } from 'node:path';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { tx } from '../../store/db.js';
import { findProject } from '../accounts/access.js';
import type { TriggerClock } from './clock.js';
import type { TriggersConfig } from './config.js';
import { BUCKET_NAME_RE } from '../../../api/triggers.js';
import { bucketDir, keyProblem, objectsRoot, walkBucket, type ObjectEntry } from './objects.js';
import { sourceOf, triggerStore as store } from './store.js';

/**
 * The object-store source: an object version (key, size, mtime) arriving in a bucket folder fires
 * every object-store trigger watching that bucket and prefix, once. Arrivals are seen three ways,
 * all through `arrived`, which is idempotent (trg_objects marks each version in the same commit
 * as its firings): `platform objects put`, a recursive watcher for plain file copies (a file
 * fires once it has stopped changing for objectSettleMs), and a scan of every bucket at start for
 * files that arrived while the daemon was down.
 */
export class ObjectSource {
  private watcher?: FSWatcher;
  private readonly settling = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly ctx: AreaContext,
    private readonly clock: TriggerClock,
    private readonly cfg: TriggersConfig,
    private readonly fired: () => void,
  ) {}

  start(): void {
    const root = objectsRoot(this.ctx.config.home);
    mkdirSync(root, { recursive: true, mode: 0o700 });
    try {
      this.watcher = watch(root, { recursive: true }, (_event, name) => name && this.changed(String(name)));
      this.watcher.on('error', (e) => this.ctx.log.warn('triggers: bucket watcher failed', { error: String(e) }));
    } catch (e) {
      this.ctx.log.warn('triggers: bucket watcher unavailable; objects fire on put and at start only', { error: String(e) });
    }
    this.scanAll();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    for (const t of this.settling.values()) clearTimeout(t);
    this.settling.clear();
  }

  /** Every bucket of every project: files that arrived while the daemon was down fire now. */
  scanAll(): void {
    const root = objectsRoot(this.ctx.config.home);
    if (!existsSync(root)) return;
    for (const short of safeList(root)) {
      const project = findProject(this.ctx.db, short);
      if (!project || project.short !== short) continue;
      for (const bucket of safeList(join(root, short))) {
        if (!BUCKET_NAME_RE.test(bucket)) continue;
        for (const e of walkBucket(bucketDir(this.ctx.config.home, short, bucket))) this.arrived(project.id, bucket, e);
      }
    }
  }

  /** A watcher event under the root: `<short>/<bucket>/<key>`; fires after the file settles. */
  private changed(rel: string): void {
    if (this.stopped) return;
    const parts = rel.split(sep);
    if (parts.length < 3) return;
    const prev = this.settling.get(rel);
    if (prev) clearTimeout(prev);
    this.settling.set(
      rel,
      setTimeout(() => {
        this.settling.delete(rel);
        this.settle(rel, parts);
      }, this.cfg.objectSettleMs),
    );
  }

  private settle(rel: string, parts: string[]): void {
    if (this.stopped) return;
    const [short, bucket, ...rest] = parts as [string, string, ...string[]];
    const key = rest.join('/');
    if (!BUCKET_NAME_RE.test(bucket) || keyProblem(key)) return;
    const project = findProject(this.ctx.db, short);
    if (!project || project.short !== short) return;
    const path = join(objectsRoot(this.ctx.config.home), rel);
    try {
      // Symbolic links on the way are never followed (objects.ts); a directory may hold new files.
      let p = bucketDir(this.ctx.config.home, short, bucket);
      for (const seg of rest.slice(0, -1)) if (lstatSync((p = join(p, seg))).isSymbolicLink()) return;
      const st = lstatSync(path);
      if (st.isDirectory()) {
        for (const e of walkBucket(path, '')) this.arrived(project.id, bucket, { ...e, key: `${key}/${e.key}` });
        return;
      }
      if (!st.isFile()) return;
      // Still being written: wait for it to hold still.
      if (Date.now() - st.mtimeMs < this.cfg.objectSettleMs) return this.changed(rel);
      this.arrived(project.id, bucket, { key, size: st.size, mtimeMs: Math.floor(st.mtimeMs) });
    } catch {
      // gone again before it settled
    }
  }

  /** One object version arrived: marks it and queues a firing per matching trigger, once. */
  arrived(projectId: string, bucket: string, e: ObjectEntry): void {
    const { db } = this.ctx;
    const queued = tx(db, () => {
      const seen = store.seenObject(db, projectId, bucket, e.key);
      if (seen && seen.size === e.size && seen.mtime_ms === e.mtimeMs) return 0;
      store.markObject(db, projectId, bucket, e.key, e.size, e.mtimeMs, isoNow(this.clock));
      let n = 0;
      const now = this.clock.now();
      for (const t of store.bySource(db, 'objectstore')) {
        if (t.project_id !== projectId) continue;
        const src = sourceOf(t).objectstore;
        if (src?.bucket !== bucket || !e.key.startsWith(src.prefix ?? '')) continue;
        const id = store.addFiring(db, {
          trigger_id: t.id,
          event_key: `obj:${e.key}@${e.size}:${e.mtimeMs}`,
          scheduled_at: now,
          body: null,
          object_key: e.key,
          catch_up: 0,
          manual: 0,
          status: 'pending',
          next_attempt_at: now,
        });
        if (id) n++;
      }
      return n;
    });
    if (queued) this.fired();
  }

  /** An object was deleted through the API: a later object of the same key is a new arrival. */
  forget(projectId: string, bucket: string, key: string): void {
    store.forgetObject(this.ctx.db, projectId, bucket, key);
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => {
      try {
        return lstatSync(join(dir, n)).isDirectory();
      } catch {
        return false;
      }
    });
  } catch {
    return [];
  }
}
