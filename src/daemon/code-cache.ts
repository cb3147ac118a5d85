import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWithCodeCache } from '../v8-code-cache.js';
import type { DaemonMainHooks } from './daemon-main.js';
import { stateHome } from './state-home.js';

/**
 * The entry of the daemon bundle (dist/daemon/daemon.bundle.js, what `platform daemon start`
 * runs): runs the daemon's code (daemon.code.cjs beside it) through a V8 code cache
 * (src/v8-code-cache.ts), so a start deserializes the functions the last start compiled instead
 * of parsing and compiling 1.2 MB of JavaScript (docs/decisions/speed-daemon.md, "Start", "Third
 * pass"). The cache lives in the state directory, which only the daemon's user can read (0700)
 * and no workload sees. It is written once every area has started (the functions of the whole
 * start path are compiled by then, and nothing else much), off the start's path, or at exit when
 * the daemon stops before that.
 */

/** Set at build time (scripts/bundle-daemon.mjs): the sha256 of daemon.code.cjs. */
declare const DAEMON_CODE_SHA256: string;

const here = dirname(fileURLToPath(import.meta.url));
// import() of this module (same directory as the code, so the same resolution).
const dynamicImport = (specifier: string) => import(specifier);
const code = runWithCodeCache({
  codeFile: join(here, 'daemon.code.cjs'),
  cacheFile: join(stateHome(process.env), 'daemon-code.cache'),
  stamp: `daemon ${DAEMON_CODE_SHA256}`,
  dynamicImport,
});
const { runDaemonMain } = code.exports as { runDaemonMain(hooks: DaemonMainHooks): void };
if (code.wanted) process.once('exit', () => code.write());
runDaemonMain(code.wanted ? { onStarted: () => setImmediate(() => code.write()) } : {});
