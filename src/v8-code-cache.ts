import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

/**
 * Runs a CommonJS bundle through a V8 code cache: a start deserializes the functions an earlier
 * start compiled instead of parsing and compiling the whole bundle. Node 20 has no compile cache
 * for ES modules (`module.enableCompileCache` is node 22's) and vm.Script takes `cachedData` only
 * for a classic script, so the daemon's code and the CLI's core are built as CommonJS
 * (scripts/bundle-daemon.mjs, scripts/bundle-cli.mjs), ASCII only, and wrapped here as node's own
 * CommonJS loader does, with two more names for what CommonJS lacks: `__importMetaUrl` and
 * `__dynamicImport` (import() inside a vm.Script needs a callback node 20 allows only behind a flag;
 * the bundles call the importing ES module's own import() instead).
 *
 * V8 checks a cache's version, flags and source length, not its contents: whoever can write the
 * cache runs code in the process, so it lives where only the user can write (the caller chooses:
 * the daemon's state directory, the user's cache directory), 0600. Each cache names what it was
 * made from (the caller's stamp, the bundle's size and mtime, node's and V8's versions, the CPU)
 * and carries its payload's sha256: V8 release builds do not verify a cache's checksum, and node
 * 20 crashed (exit 139) on every start with a damaged cache whose header still matched. Any other
 * cache is ignored and one V8 rejects is replaced. Nothing here may fail a start: a cache that
 * cannot be read or written only means compiling as before.
 */
export interface CodeCacheRun {
  /** module.exports of the bundle. */
  exports: unknown;
  /** Whether the cache should be (re)written; `write` does it once, after the code the run needs has compiled. */
  wanted: boolean;
  write(): void;
}

const WRAPPER = '(function (exports, require, module, __filename, __dirname, __importMetaUrl, __dynamicImport) {';
/** After the header: the payload's sha256 (hex) and a newline. */
const DIGEST_LENGTH = 64 + 1;

export function runWithCodeCache(opts: {
  codeFile: string;
  /** Where the cache lives; undefined runs without one. */
  cacheFile: string | undefined;
  /** What identifies the build beyond the file's size and mtime (a content hash). */
  stamp: string;
  dynamicImport: (specifier: string) => Promise<unknown>;
}): CodeCacheRun {
  const { codeFile, cacheFile } = opts;
  // ASCII by construction (the bundlers escape the rest): latin1 reads it into a one-byte string without decoding.
  const source = readFileSync(codeFile, 'latin1');
  const header = Buffer.from(cacheHeader(codeFile, opts.stamp), 'latin1');
  const cached = cacheFile ? readCache(cacheFile, header) : undefined;
  // Same line as the code's first: stack traces keep the file's line numbers.
  const script = new Script(`${WRAPPER}${source}\n})`, { filename: codeFile, cachedData: cached });
  let wanted = cacheFile !== undefined && (cached === undefined || script.cachedDataRejected === true);
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(codeFile), module, codeFile, dirname(codeFile), pathToFileURL(codeFile).href, opts.dynamicImport);
  return {
    exports: module.exports,
    get wanted() {
      return wanted;
    },
    write() {
      if (!wanted || !cacheFile) return;
      wanted = false;
      writeCache(cacheFile, header, script);
    },
  };
}

function cacheHeader(codeFile: string, stamp: string): string {
  let file = '';
  try {
    const st = statSync(codeFile);
    file = `${st.size} ${st.mtimeMs}`;
  } catch {
    // read next, where a missing file fails as it should
  }
  return `platform code cache 1 ${stamp} ${file} node ${process.version} v8 ${process.versions.v8} ${process.arch} `;
}

const digest = (payload: Buffer) => createHash('sha256').update(payload).digest('hex');

function readCache(cacheFile: string, header: Buffer): Buffer | undefined {
  try {
    const data = readFileSync(cacheFile);
    if (data.length <= header.length + DIGEST_LENGTH || !data.subarray(0, header.length).equals(header)) return undefined;
    const payload = data.subarray(header.length + DIGEST_LENGTH);
    if (data.toString('latin1', header.length, header.length + DIGEST_LENGTH) === `${digest(payload)}\n`) return payload;
  } catch {
    // none yet
  }
  return undefined;
}

/** Written aside and renamed into place: a start never reads half a cache. */
function writeCache(cacheFile: string, header: Buffer, script: Script): void {
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 });
    const payload = script.createCachedData();
    // Three writes rather than one concatenated copy of the payload: less memory kept at rest.
    const fd = openSync(tmp, 'w', 0o600);
    try {
      for (const part of [header, Buffer.from(`${digest(payload)}\n`, 'latin1'), payload]) writeSync(fd, part);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, cacheFile);
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // the directory itself is gone or read-only
    }
  }
}
