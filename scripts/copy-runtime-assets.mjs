// Copies the files workloads run (shims, the agent harness, the door, the sandbox runners, the
// secrets helpers: everything under src/daemon/runtimes that is not TypeScript) into
// dist/daemon/runtimes. tsc copies only what it compiles, and the packed package ships dist/, not
// src/ (docs/decisions.md, Installing it).
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';

const from = 'src/daemon/runtimes';
const to = 'dist/daemon/runtimes';
const shipped = (path) => !/\.tsx?$/.test(path) && basename(path) !== '__pycache__' && !path.endsWith('.pyc');

// Compiled modules share dist/daemon/runtimes: a file removed from an asset folder must not linger.
for (const entry of readdirSync(from, { withFileTypes: true })) {
  if (entry.isDirectory()) rmSync(join(to, entry.name), { recursive: true, force: true });
}
cpSync(from, to, { recursive: true, filter: shipped });
