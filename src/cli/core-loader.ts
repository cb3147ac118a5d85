import { homedir } from 'node:os';
import { join } from 'node:path';
import { runWithCodeCache } from '../v8-code-cache.js';

/**
 * Loads the CLI's core (oclif, the quick start and most commands, one CommonJS script built by
 * scripts/bundle-cli.mjs) through a V8 code cache (src/v8-code-cache.ts): compiling oclif's 800 KB
 * and the functions a command runs cost each start ~20 ms of CPU. The cache is the user's own
 * (XDG_CACHE_HOME or ~/.cache, then platform/v8/cli-core.cache, 0700 / 0600), written when the
 * process exits after a start that found none or one that did not fit, so it holds the functions
 * that run compiled. PLATFORM_NO_CODE_CACHE=1 turns it off.
 */
export function loadCore(codeFile: string, buildHash: string, dynamicImport: (specifier: string) => Promise<unknown>): unknown {
  const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const code = runWithCodeCache({
    codeFile,
    cacheFile: process.env.PLATFORM_NO_CODE_CACHE ? undefined : join(cacheHome, 'platform', 'v8', 'cli-core.cache'),
    stamp: `cli ${buildHash}`,
    dynamicImport,
  });
  if (code.wanted) process.once('exit', () => code.write());
  return code.exports;
}
