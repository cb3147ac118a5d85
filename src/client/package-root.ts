import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * A file of the installed package (the daemon bundle, the templates). Found from the package root,
 * the nearest folder with a package.json above this module, because the module's own place differs
 * between src/ under tsx, the tsc tree in dist/ and a chunk of the CLI bundle.
 */
export function packageFile(...parts: string[]): string {
  if (!root) {
    const from = dirname(fileURLToPath(import.meta.url));
    for (let dir = from; ; dir = dirname(dir)) {
      if (existsSync(join(dir, 'package.json'))) {
        root = dir;
        break;
      }
      if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
    }
  }
  return join(root, ...parts);
}
