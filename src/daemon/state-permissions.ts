import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The state directory holds password hashes, sealed values, keys and cache data: only the
 * daemon's user may read it (issue 17). New files get 0600 and directories 0700 through the
 * umask; what an older version (or the CLI, before the daemon first ran) created wider is
 * tightened on every start.
 */

/** Trees holding workloads' own files: only their top directory is tightened (the home is 0700, so nothing below is reachable). */
const SHALLOW = new Set(['builds', 'workloads']);
/** Deeper trees are not walked at start: the 0700 home already closes them. */
const MAX_DEPTH = 6;

/** umask 077 for the daemon and what it spawns (Redis data files, logs, build output). */
export function privateUmask(): void {
  try {
    process.umask(0o077);
  } catch {
    // worker threads cannot change the umask; the explicit modes below still apply
  }
}

/**
 * Creates the home 0700, tightens it and what lies in it (group and other bits dropped, owner
 * bits kept so executables stay executable), and pre-creates the database file 0600 so SQLite's
 * WAL and shared-memory files, which copy the database file's mode, are born private.
 */
export function makeStatePrivate(home: string, dbFile: string): void {
  privateUmask();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  tighten(home, 0);
  if (!existsSync(dbFile)) closeSync(openSync(dbFile, 'a', 0o600));
  for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
}

function tighten(path: string, depth: number): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return; // removed meanwhile
  }
  if (st.isSymbolicLink()) return; // never follow links out of the state directory
  const mode = st.mode & 0o777;
  if (st.isDirectory()) {
    if (mode !== 0o700) chmodSync(path, 0o700);
    if (depth >= MAX_DEPTH) return;
    for (const name of readdirSync(path)) {
      if (depth === 0 && SHALLOW.has(name)) {
        tighten(join(path, name), MAX_DEPTH);
        continue;
      }
      tighten(join(path, name), depth + 1);
    }
    return;
  }
  if (st.isFile() && mode & 0o077) chmodSync(path, (mode & 0o700) | 0o600);
}
