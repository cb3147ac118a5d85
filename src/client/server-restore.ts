import { chmod, lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { x as tarExtract } from 'tar';
import { BACKUP_MANIFEST, BackupManifest } from '../api/operations.js';
import { AbortError } from './errors.js';

export interface RestoreResult {
  home: string;
  /** The state directory the backup was taken from. */
  from_home: string;
  platform_version: string;
  created_at: string;
  parts: string[];
  /** True when stored paths naming the old state directory were rewritten to the new one. */
  relocated: boolean;
}

/**
 * Restores a backup archive into an empty (or missing) state directory, with the daemon's own
 * permissions: directories 0700 and files 0600 (owner execute bits kept, as state-permissions.ts
 * does). Nothing is written into a directory that holds anything, so a restore can never mix two
 * states. Start a daemon on the directory afterwards (PLATFORM_HOME=DIR).
 */
export async function restoreBackup(file: string, homeArg: string): Promise<RestoreResult> {
  const archive = resolve(file);
  const home = resolve(homeArg);
  if (!existsSync(archive)) throw new AbortError(`no backup archive at ${archive}`);
  let created = false;
  if (existsSync(home)) {
    if (!statSync(home).isDirectory()) throw new AbortError(`${home} is not a directory`);
    const entries = await readdir(home);
    if (entries.length) {
      throw new AbortError(`refusing to restore into ${home}: it is not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'})`, 'restore into a new or empty directory, then point PLATFORM_HOME at it');
    }
  } else {
    await mkdir(home, { recursive: true, mode: 0o700 });
    created = true;
  }
  // Files are born private; the walk below fixes what the archive's modes say otherwise.
  const umask = process.umask(0o077);
  try {
    try {
      await tarExtract({ file: archive, cwd: home, strict: true, preserveOwner: false });
    } catch (e) {
      throw new AbortError(`${archive} is not a readable backup archive: ${(e as Error).message}`);
    }
    const manifest = await readManifest(home);
    await makePrivate(home);
    const relocated = manifest.home !== home;
    if (relocated) await relocate(home, manifest.home);
    return { home, from_home: manifest.home, platform_version: manifest.platform_version, created_at: manifest.created_at, parts: manifest.parts, relocated };
  } catch (e) {
    // Leave the directory as it was found: empty (or absent).
    if (created) await rm(home, { recursive: true, force: true });
    else for (const entry of await readdir(home)) await rm(join(home, entry), { recursive: true, force: true });
    throw e;
  } finally {
    process.umask(umask);
  }
}

async function readManifest(home: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await readFile(join(home, BACKUP_MANIFEST), 'utf8');
  } catch {
    throw new AbortError(`the archive has no ${BACKUP_MANIFEST}: it is not a platform backup`);
  }
  const parsed = BackupManifest.safeParse(JSON.parse(text));
  if (!parsed.success) throw new AbortError(`the archive's ${BACKUP_MANIFEST} is not one this version reads: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  if (!existsSync(join(home, 'platform.db'))) throw new AbortError('the archive holds no platform.db');
  return parsed.data;
}

/** Directories 0700, files owner-only (execute bits kept); links are left alone, never followed. */
async function makePrivate(path: string): Promise<void> {
  const st = await lstat(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    await chmod(path, 0o700);
    for (const name of await readdir(path)) await makePrivate(join(path, name));
    return;
  }
  if (st.isFile()) await chmod(path, (st.mode & 0o700) | 0o600);
}

/**
 * Built revisions of agents, functions and MCP servers are recorded by absolute path, and a
 * Python revision names its environment by absolute path: restored elsewhere, those paths are
 * rewritten from the old state directory to the new one.
 */
async function relocate(home: string, oldHome: string): Promise<void> {
  const { default: Database } = await import('better-sqlite3');
  const prefix = oldHome.endsWith(sep) ? oldHome : oldHome + sep;
  const next = home + sep;
  const db = new Database(join(home, 'platform.db'));
  try {
    db.transaction(() => {
      for (const table of ['agents_revisions', 'mcp_versions']) {
        const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table);
        if (!exists) continue;
        db.prepare(`UPDATE ${table} SET artifact = ? || substr(artifact, ?) WHERE substr(artifact, 1, ?) = ?`).run(next, prefix.length + 1, prefix.length, prefix);
      }
    })();
  } finally {
    db.close();
  }
  // Markers sit at the top of each revision folder: workloads/<agent>/<revision>/.platform-python.
  const workloads = join(home, 'workloads');
  if (!existsSync(workloads)) return;
  for (const agent of await readdir(workloads, { withFileTypes: true })) {
    if (!agent.isDirectory()) continue;
    for (const revision of await readdir(join(workloads, agent.name), { withFileTypes: true })) {
      const marker = join(workloads, agent.name, revision.name, '.platform-python');
      if (!revision.isDirectory() || !existsSync(marker)) continue;
      const venv = await readFile(marker, 'utf8');
      if (venv.startsWith(prefix)) await writeFile(marker, next + venv.slice(prefix.length));
    }
  }
}
