import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The package root: the nearest folder with a package.json above this module (neither src/ nor
 * dist/ has one of its own). Files of the package (the daemon bundle, the templates, the runtime
 * assets) are found from it, because a module's own place differs between src/ under tsx, the tsc
 * tree in dist/, the daemon bundle and a chunk of the CLI bundle.
 */
export function packageRoot(): string {
  if (root) return root;
  const from = dirname(fileURLToPath(import.meta.url));
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** A file of the installed package. */
export const packageFile = (...parts: string[]): string => join(packageRoot(), ...parts);
