import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import type { Writable } from 'node:stream';
import { BACKUP_FORMAT, BACKUP_MANIFEST, type BackupManifest } from '../../../api/operations.js';
import type { AreaContext, BackupFile } from '../../area.js';
import { isoNow } from '../../clock.js';
import { loadTar } from '../../lazy/modules.js';

/**
 * Durable trees of the state directory copied as they are (docs/decisions/operations.md): keys
 * (signing, secrets master, vector and broker keys, the cache CA), buckets, serverless sources,
 * built revisions of agents, functions and MCP servers, and the Python environments those run
 * from. Logs, locator, sockets, instance ledgers and build caches are left out: the daemon
 * recreates them. Copied after the store's snapshot, so every revision the snapshot names is
 * complete on disk.
 */
const AFTER_STORE = ['keys', 'objects', join('serverless', 'sources'), 'workloads', join('cache', 'venvs')];
/** Vector graph saves are copied before the store: a save older than the rows only replays more. */
const BEFORE_STORE = ['vector'];
/** Half-written files: an MCP build's staging folder, an object upload before its rename. */
const transient = (name: string) => name.startsWith('.staging-') || name.startsWith('.upload-');

export interface PreparedBackup {
  /** Streams the archive (tar.gz) to `out` and removes the staging copy; rejects on a write error. */
  stream(out: Writable): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Makes a consistent copy of the state directory in a staging folder beside it, while the daemon
 * keeps serving: areas' own snapshots first (caches), vector saves, the store through SQLite's
 * online backup (which follows writes made meanwhile on the daemon's connection, so it ends with
 * every write acknowledged before it finished), then the durable trees. Everything that can
 * fail happens here, before any byte of the response is sent.
 */
export async function prepareBackup(ctx: AreaContext): Promise<PreparedBackup> {
  const home = ctx.config.home;
  const staging = await mkdtemp(join(home, STAGING_PREFIX));
  const started = performance.now();
  const phases: Record<string, number> = {};
  const lap = (name: string) => (phases[`${name}_ms`] = Math.round(performance.now() - started));
  try {
    const areaFiles = (await Promise.all(ctx.hooks.backupPreparers.map((p) => p.files()))).flat();
    lap('areas');
    const parts: string[] = [];
    for (const rel of BEFORE_STORE) if (await copyTree(home, staging, rel)) parts.push(rel);
    lap('before_store');
    await ctx.db.backup(join(staging, 'platform.db'));
    lap('store');
    parts.push('platform.db');
    for (const rel of AFTER_STORE) if (await copyTree(home, staging, rel)) parts.push(rel);
    for (const f of areaFiles) await placeFile(staging, f);
    lap('files');
    ctx.log.info('backup prepared', phases);
    for (const p of new Set(ctx.hooks.backupPreparers.map((p) => p.area))) parts.push(`${p} (area files)`);
    const manifest: BackupManifest = { format: BACKUP_FORMAT, platform_version: ctx.config.version, created_at: isoNow(ctx.clock), home, parts };
    await writeFile(join(staging, BACKUP_MANIFEST), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  }
  const discard = () => rm(staging, { recursive: true, force: true });
  return {
    discard,
    async stream(out) {
      try {
        const entries = await readdir(staging);
        // The manifest first, so a reader learns the format before anything else.
        const ordered = [BACKUP_MANIFEST, ...entries.filter((e) => e !== BACKUP_MANIFEST).sort()];
        const pack = loadTar().c({ gzip: true, cwd: staging }, ordered);
        await new Promise<void>((resolve, reject) => {
          out.once('error', reject);
          out.once('close', () => ((out as Writable & { writableFinished: boolean }).writableFinished ? resolve() : reject(new Error('the client went away during the backup'))));
          (pack as unknown as NodeJS.ReadableStream).on('error', reject);
          (pack as unknown as NodeJS.ReadableStream).pipe(out);
        });
      } finally {
        await discard();
      }
    },
  };
}

/** Staging folders live beside the state (same file system); their names start with this. */
const STAGING_PREFIX = '.backup-';

/** Removes staging folders a daemon that died mid-backup left behind (called at start, when none can be running). */
export async function removeLeftoverStaging(home: string): Promise<void> {
  if (!existsSync(home)) return;
  for (const name of await readdir(home)) if (name.startsWith(STAGING_PREFIX)) await rm(join(home, name), { recursive: true, force: true });
}

/**
 * Copies home/rel to staging/rel: symlinks as links (never followed), files that vanish during
 * the walk (an object deleted meanwhile) skipped; false when the tree does not exist.
 */
async function copyTree(home: string, staging: string, rel: string): Promise<boolean> {
  if (!existsSync(join(home, rel))) return false;
  await mkdir(dirname(join(staging, rel)), { recursive: true, mode: 0o700 });
  const walk = async (r: string): Promise<void> => {
    const from = join(home, r);
    const to = join(staging, r);
    let st;
    try {
      st = await lstat(from);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    if (st.isSymbolicLink()) return symlink(await readlink(from), to);
    if (st.isDirectory()) {
      await mkdir(to, { mode: 0o700 });
      for (const name of await readdir(from)) if (!transient(name)) await walk(join(r, name));
      return;
    }
    if (!st.isFile()) return; // sockets, fifos: not state
    try {
      await copyFile(from, to);
      await chmod(to, st.mode & 0o700);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  };
  await walk(rel);
  return true;
}

async function placeFile(staging: string, f: BackupFile): Promise<void> {
  const to = join(staging, f.path);
  if (!to.startsWith(staging + sep)) throw new Error(`a backup file outside the archive: ${f.path}`);
  await mkdir(dirname(to), { recursive: true, mode: 0o700 });
  if (f.from !== undefined) {
    await stat(f.from);
    await copyFile(f.from, to);
  } else await writeFile(to, f.data ?? '', { mode: 0o600 });
}
