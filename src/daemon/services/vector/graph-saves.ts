import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { restoreAnn, type AnnMeta } from './ann.js';
import type { IndexEngine, SavedGraph } from './engine.js';
import { readGraphFile, syncFile, writeGraphFile } from './graph-file.js';
import type { IndexRow } from './store.js';

interface Header {
  seq: number;
  keys: string[];
  ann: AnnMeta;
}

/** A save whose slots are mostly tombstones is ignored: a rebuild compacts it. */
const MIN_LIVE_SHARE = 0.5;

/**
 * Saved graphs of the vector area, in `<home>/vector`: `<index id>.graph` holds our header (keys by
 * slot, the write sequence, the index description) and our graphs' arrays; hnswlib writes its own
 * `<index id>.<generation>.hnsw`, named in the header, so a crash between the two writes leaves
 * the previous header pointing at the previous generation. SQLite stays the truth: a save only
 * spares the start-up rebuild.
 */
export class GraphSaves {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private header(id: string) {
    return join(this.dir, `${id}.graph`);
  }

  /**
   * Saves a whole graph reflecting write sequence `seq`; false when the graph is still filling.
   * The graph is held still (writes wait beside it) until its files are written, in the thread
   * pool; the event loop only copies the keys and encodes the header.
   */
  async save(id: string, engine: IndexEngine, seq: number): Promise<boolean> {
    const sidecar = `${id}.${randomBytes(4).toString('hex')}.hnsw`;
    const saved = engine.save(join(this.dir, sidecar));
    if (!saved) return false;
    const ann = saved.ann.meta.kind === 'hnswlib' ? { ...saved.ann.meta, sidecar } : saved.ann.meta;
    const keep = ann.kind === 'hnswlib' ? sidecar : undefined;
    try {
      await saved.ann.written;
      // The header names the sidecar, so the sidecar reaches the disk first.
      if (keep) await syncFile(join(this.dir, keep));
      await writeGraphFile(this.header(id), { seq, keys: saved.keys, ann } satisfies Header, saved.ann.sections);
    } catch (e) {
      if (keep) rmSync(join(this.dir, keep), { force: true });
      engine.changes += saved.changes;
      throw e;
    } finally {
      saved.ann.release();
    }
    this.removeFiles(id, keep);
    return true;
  }

  /** The saved graph of an index, undefined when there is none worth loading; throws when it is unreadable. */
  load(row: IndexRow): SavedGraph | undefined {
    const path = this.header(row.id);
    if (!existsSync(path)) return undefined;
    const { header, sections } = readGraphFile(path);
    const h = header as Header;
    const live = h.keys.reduce((n, k) => n + (k ? 1 : 0), 0);
    if (live < h.keys.length * MIN_LIVE_SHARE) return undefined;
    // Names are relative to the directory, so a moved home still loads.
    const meta = h.ann.kind === 'hnswlib' ? { ...h.ann, sidecar: join(this.dir, h.ann.sidecar) } : h.ann;
    const ann = restoreAnn({ dims: row.dimensions, distance: row.distance, quantization: row.q_kind }, meta, sections);
    return { ann, keys: h.keys, seq: h.seq };
  }

  /** Removes an index's files other than its header and the hnswlib generation it names. */
  private removeFiles(id: string, keepSidecar?: string): void {
    for (const f of readdirSync(this.dir)) {
      if (f.startsWith(`${id}.`) && f !== `${id}.graph` && f !== keepSidecar) rmSync(join(this.dir, f), { force: true });
    }
  }

  remove(id: string): void {
    rmSync(this.header(id), { force: true });
    this.removeFiles(id);
  }

  /**
   * Start-up cleaning: files of indexes that no longer exist (deleted while the daemon was down, or
   * a crash mid-delete) and temporary files of a save that was cut short (a SIGKILL mid-write).
   */
  prune(known: Set<string>): void {
    for (const f of readdirSync(this.dir)) {
      const id = f.split('.')[0]!;
      if (!known.has(id) || f.endsWith('.tmp')) rmSync(join(this.dir, f), { force: true });
    }
  }
}
