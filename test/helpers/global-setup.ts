import { execFileSync } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Newest modification time under a directory, to rebuild only when sources changed. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** CLI and process tests run the built binary, so build once before any test file runs. */
export default function setup(): void {
  const root = join(import.meta.dirname, '..', '..');
  const manifest = join(root, 'oclif.manifest.json');
  const built = existsSync(manifest) ? statSync(manifest).mtimeMs : 0;
  if (built < newest(join(root, 'src')) || process.env.CI) {
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  }
}
