import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/**
 * Loads a CommonJS bundle through V8's code cache. Compiling oclif's 800 KB and the functions a
 * command runs cost each start ~20 ms of CPU; Node 22 caches ES modules' compiled code itself
 * (`module.enableCompileCache`), Node 20 has nothing of the kind. The cache lives in the user's
 * own cache directory (XDG_CACHE_HOME or ~/.cache, then platform/v8, mode 0700), keyed by the
 * bundle's file name (which carries its content hash, scripts/bundle-cli.mjs), size and modification
 * time, the Node version and the architecture; V8 checks its own version and flags and rejects a cache that does not fit, and a
 * rejected or missing cache is written again, once, when the process exits (so it holds the
 * functions the run compiled, not only the top level). PLATFORM_NO_CODE_CACHE=1 turns it off.
 */
export function requireWithCodeCache(url: URL, dynamicImport: (specifier: string) => Promise<unknown>): unknown {
  const file = fileURLToPath(url);
  // The bundle is ASCII (scripts/bundle-cli.mjs): latin1 reads it as a one-byte string without decoding.
  const source = readFileSync(file, 'latin1');
  // The parameters of Node's own CommonJS wrapper, plus the import() of the ES module that loads it:
  // code run by vm.Script has no dynamic import of its own (the bundler points oclif's at this one).
  const wrapped = `(function (exports, require, module, __filename, __dirname, __platformImport) {${source}\n})`;
  const cacheFile = process.env.PLATFORM_NO_CODE_CACHE ? undefined : codeCacheFile(file);
  const cachedData = cacheFile ? readIfPresent(cacheFile) : undefined;
  const script = new Script(wrapped, { filename: file, cachedData });
  if (cacheFile && (!cachedData || script.cachedDataRejected)) process.once('exit', () => writeCache(cacheFile, script));
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file), dynamicImport);
  return module.exports;
}

/**
 * V8 checks cached data against the source's length only: the file's size and modification time
 * are part of the key, so a bundle changed in place (same name, same length) is compiled afresh.
 */
function codeCacheFile(file: string): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const { size, mtimeMs } = statSync(file);
  return join(base, 'platform', 'v8', `${basename(file)}-${size}-${Math.trunc(mtimeMs)}-${process.version}-${process.arch}.bin`);
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Best effort: a cache that cannot be written only means the next start compiles again. */
function writeCache(file: string, script: Script): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Written aside and renamed: concurrent starts never read a half-written cache.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, file);
    // The caches of earlier builds or installs, for this node, are of no further use.
    const name = basename(file);
    const kind = name.slice(0, name.indexOf('-') + 1);
    const forThisNode = `-${process.version}-${process.arch}.bin`;
    for (const old of readdirSync(dirname(file))) {
      if (old !== name && old.startsWith(kind) && old.endsWith(forThisNode)) rmSync(join(dirname(file), old), { force: true });
    }
  } catch {
    // ignored on purpose (read-only home, full disk)
  }
}
