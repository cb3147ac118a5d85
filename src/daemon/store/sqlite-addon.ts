import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let found: string | null | undefined;

/**
 * The path of better-sqlite3's compiled addon, handed to `new Database(file, { nativeBinding })`:
 * left to itself, better-sqlite3 finds it through the `bindings` package, which builds a stack
 * trace and probes a dozen paths, ~4 ms of the start's CPU (11.6 against 7.4 ms to load and open,
 * medians of 15 processes). npm's install (a prebuild or a local compile) puts it in
 * build/Release; anywhere else this is undefined and better-sqlite3 looks for it as before.
 */
export function sqliteAddonPath(): string | undefined {
  if (found === undefined) {
    try {
      const addon = join(dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
      found = existsSync(addon) ? addon : null;
    } catch {
      found = null;
    }
  }
  return found ?? undefined;
}
