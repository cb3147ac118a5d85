import { existsSync, lstatSync, readdirSync, readFileSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { ignoreMatcher } from '../client/pack.js';

/**
 * Folders whose changes never change what is deployed, or change too often to follow: version
 * control, dependency trees a build installs, Python's caches, the CLI's own state. (`dist` and
 * `build` are left watched: in a Go or TypeScript function they may well be the source.)
 */
export const IGNORED_DIRS = new Set(['.git', '.hg', '.svn', 'node_modules', '.venv', 'venv', '__pycache__', '.platform', '.pytest_cache', '.mypy_cache']);

/**
 * Files that are no source change: editors' swap and backup files, vim's write probe (4913),
 * and payload.json, which `i` reads afresh on each press (editing the payload needs no deploy).
 */
const IGNORED_FILE = /(^|\/)(\.[^/]*\.sw[a-p]|[^/]*~|4913|\.#[^/]*|#[^/]*#|\.DS_Store|payload\.json)$/;

/** True for a path (relative to the watched folder, `/`-separated) whose change does not redeploy. */
export function ignoredChange(path: string): boolean {
  const parts = path.split('/');
  if (parts.slice(0, -1).some((p) => IGNORED_DIRS.has(p))) return true;
  if (IGNORED_DIRS.has(parts.at(-1)!)) return true;
  return IGNORED_FILE.test(path);
}

/**
 * What the deploy leaves out (.gitignore, .platformignore, read as packDirectory reads them): a
 * change there uploads the same source, so it is no reason to redeploy.
 */
export function unpackedMatcher(dir: string): (path: string) => boolean {
  const lines: string[] = [];
  for (const f of ['.gitignore', '.platformignore']) if (existsSync(join(dir, f))) lines.push(...readFileSync(join(dir, f), 'utf8').split('\n'));
  const ignored = ignoreMatcher(lines);
  return (path) => {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) if (ignored(parts.slice(0, i).join('/'), true)) return true;
    return ignored(path, false);
  };
}

export interface FolderWatcher {
  close(): void;
}

/**
 * Watches a folder and its subfolders and calls `onChange` once per burst: an editor's save is
 * often several events (a temporary file, a rename, a chmod), and a `git checkout` touches many
 * files at once. The burst carries the time of its first event, so the caller can time
 * save-to-serving from the save itself, and the last file it touched that still exists.
 *
 * One inotify watch per directory (fs.watch without `recursive`), added for directories as they
 * appear: Node 20's recursive mode on Linux watches each file's inode, and loses a file as soon
 * as an editor saves it by writing a new file and renaming it over the old one (sed -i, vim).
 */
export function watchFolder(dir: string, onChange: (first: { path: string; at: number }) => void, opts: { debounceMs?: number } = {}): FolderWatcher {
  const debounceMs = opts.debounceMs ?? 40;
  let timer: NodeJS.Timeout | undefined;
  let first: { path: string; at: number } | undefined;
  let last: string | undefined;
  let unpacked = unpackedMatcher(dir);
  const watchers = new Map<string, FSWatcher>();
  const changed = (path: string) => {
    if (!path || ignoredChange(path)) return;
    if (path === '.gitignore' || path === '.platformignore') unpacked = unpackedMatcher(dir);
    else if (unpacked(path)) return;
    first ??= { path, at: Date.now() };
    last = path;
    clearTimeout(timer);
    timer = setTimeout(() => {
      // Timed from the burst's first event, named by the file it left: `sed -i` writes a temporary `sed` + six random characters (sed98m1vF)
      // and renames it over the source, so the first name seen is a file that is gone.
      const burst = { path: existsSync(join(dir, last!)) ? last! : first!.path, at: first!.at };
      first = undefined;
      onChange(burst);
    }, debounceMs);
  };
  const add = (rel: string) => {
    if (watchers.has(rel) || (rel && (ignoredChange(rel) || unpacked(rel)))) return;
    let w: FSWatcher;
    try {
      w = watch(rel ? join(dir, rel) : dir, (event, name) => {
        const path = rel ? `${rel}/${String(name ?? '')}` : String(name ?? '');
        // A new (or renamed-in) directory gets its own watch; its files count as a change.
        if (event === 'rename' && name && isDirectory(join(dir, path))) {
          // Deleted and made again under the same name: the old watch follows a dead inode.
          watchers.get(path)?.close();
          watchers.delete(path);
          add(path);
        }
        changed(path);
      });
    } catch {
      return; // gone already, or not readable
    }
    // A watched directory that disappears ends its watch; the rest keeps working.
    w.on('error', () => {
      w.close();
      watchers.delete(rel);
    });
    watchers.set(rel, w);
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(rel ? join(dir, rel) : dir, { withFileTypes: true });
    } catch {
      // removed meanwhile
    }
    for (const e of entries) if (e.isDirectory()) add(rel ? `${rel}/${e.name}` : e.name);
  };
  add('');
  return {
    close() {
      clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
