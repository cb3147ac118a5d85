import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The state directory holds password hashes, sealed values, keys and cache data: only the
 * daemon's user may read it (issue 17). New files get 0600 and directories 0700 through the
 * umask; what an older version (or the CLI, before the daemon first ran) created wider is
 * tightened on every start.
 */

/** Trees holding workloads' own files (builds, node_modules): only their top directory is tightened. */
const SHALLOW = new Set(['builds', 'workloads']);
/** Deeper trees are not walked at start: the 0700 home already closes them. */
const MAX_DEPTH = 6;
/**
 * Written after the first full walk. From then on the umask keeps new files private, so later
 * starts only tighten the first level, where the CLI (with the user's own umask) writes too:
 * a full walk of a state directory with many instances costs tens of milliseconds of start-up.
 */
const MARKER = '.private-v1';

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
  const marker = join(home, MARKER);
  const walked = existsSync(marker);
  tighten(home, 0, walked ? 2 : MAX_DEPTH);
  if (!walked) writeFileSync(marker, 'state files tightened to owner-only; see docs/decisions.md\n', { mode: 0o600 });
  if (!existsSync(dbFile)) closeSync(openSync(dbFile, 'a', 0o600));
  for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
}

/**
 * Tightens one small tree fully (a cache instance's directory at each start): servers in
 * containers write with the image's umask, not the daemon's.
 */
export function tightenTree(dir: string): void {
  tighten(dir, 0, MAX_DEPTH);
}

function tighten(path: string, depth: number, maxDepth: number): void {
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
    if (depth >= maxDepth) return;
    for (const name of readdirSync(path)) {
      // Only the top of the workloads' trees: the 0700 home closes what lies below.
      tighten(join(path, name), depth === 0 && SHALLOW.has(name) ? maxDepth : depth + 1, maxDepth);
    }
    return;
  }
  if (st.isFile() && mode & 0o077) chmodSync(path, (mode & 0o700) | 0o600);
}
