import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import type { DaemonMainHooks } from './daemon-main.js';
import { stateHome } from './state-home.js';

/**
 * The entry of the daemon bundle (dist/daemon/daemon.bundle.js, what `platform daemon start`
 * runs): loads the daemon's code (daemon.code.cjs beside it) through a V8 code cache, so a start
 * deserializes the functions the last start compiled instead of parsing and compiling 1.2 MB of
 * JavaScript (docs/decisions/speed-daemon.md, "Start", "Third pass"). Node 20 has no module
 * compile cache (`module.enableCompileCache` is node 22's), and vm.Script takes `cachedData` only
 * for a classic script: the code is therefore built as a CommonJS function body
 * (scripts/bundle-daemon.mjs), which this wraps as node's own CommonJS loader does.
 *
 * The cache lives in the state directory, which only the daemon's user can read (0700) and no
 * workload sees: V8 checks a cache's version, flags and source length, not its contents, so a
 * cache someone else could write would be code they run in the daemon. Each cache names what it
 * was made from (the code's build hash, size and mtime, node's and V8's versions, the CPU): any
 * other cache is ignored, and one V8 rejects anyway (other flags) is replaced. Nothing here may
 * fail a start: a cache that cannot be read or written (a read-only or removed home) only means
 * compiling as before.
 */

/** Set at build time (scripts/bundle-daemon.mjs): the sha256 of daemon.code.cjs. */
declare const DAEMON_CODE_SHA256: string;

const CODE_FILE = 'daemon.code.cjs';
const CACHE_FILE = 'daemon-code.cache';
/** The names the code's body reads besides CommonJS's own (see scripts/bundle-daemon.mjs). */
const WRAPPER = '(function (exports, require, module, __filename, __dirname, __importMetaUrl, __dynamicImport) {';

const here = dirname(fileURLToPath(import.meta.url));
const codeFile = join(here, CODE_FILE);
const cacheFile = join(stateHome(process.env), CACHE_FILE);

// ASCII (scripts/bundle-daemon.mjs): latin1 copies the bytes into a one-byte string, where utf8
// would decode them slowly into a two-byte one.
const source = readFileSync(codeFile, 'latin1');
const header = Buffer.from(cacheHeader(), 'utf8');
/** After the header: the payload's sha256 (hex) and a newline. */
const DIGEST_LENGTH = 64 + 1;
const cached = readCache();
// Same line as the code's first: stack traces keep the file's line numbers.
const script = new Script(WRAPPER + source + '\n})', { filename: codeFile, cachedData: cached });
let cacheWanted = cached === undefined || script.cachedDataRejected === true;

const run = script.runInThisContext() as (...args: unknown[]) => void;
const module = { exports: {} as { runDaemonMain(hooks: DaemonMainHooks): void } };
// import() inside a vm.Script needs a callback node 20 only allows behind a flag: the body calls
// this module's import() instead (same directory, so the same resolution).
const dynamicImport = (specifier: string) => import(specifier);
run.call(module.exports, module.exports, createRequire(codeFile), module, codeFile, here, pathToFileURL(codeFile).href, dynamicImport);

if (cacheWanted) process.once('exit', writeCache); // stopped before every area started
module.exports.runDaemonMain(cacheWanted ? { onStarted: () => setImmediate(writeCache) } : {});

function cacheHeader(): string {
  let stamp = '';
  try {
    const st = statSync(codeFile);
    stamp = `${st.size} ${st.mtimeMs}`;
  } catch {
    // read below, where a missing file fails the start as it should
  }
  return `platform daemon code cache 1 ${DAEMON_CODE_SHA256} ${stamp} node ${process.version} v8 ${process.versions.v8} ${process.arch} `;
}

function digest(payload: Buffer): string {
  return createHash('sha256').update(payload).digest('hex');
}

/**
 * The payload's digest is checked too: V8 verifies a cache's checksum only in debug builds, and
 * a damaged cache it accepted could crash every start until removed.
 */
function readCache(): Buffer | undefined {
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

/**
 * Written once every area has started (the functions of the whole start path are compiled by
 * then, and nothing else much), off the start's path; renamed into place so a start never reads
 * half a cache.
 */
function writeCache(): void {
  if (!cacheWanted) return;
  cacheWanted = false;
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  try {
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
      // the home itself is gone or read-only
    }
  }
}
