import { execa } from 'execa';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

/**
 * `npm pack` of the checkout into `dir`; returns the tarball's path. Scripts are skipped: the
 * suite's global setup has built dist/, and a prepack rebuild would rewrite dist/ under the
 * other test files running beside this one.
 */
export async function packTarball(dir: string): Promise<{ file: string; ms: number }> {
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const r = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT });
  const [info] = JSON.parse(r.stdout) as { filename: string }[];
  return { file: join(dir, info!.filename), ms: performance.now() - t0 };
}

/**
 * better-sqlite3 installs a prebuilt binary from its GitHub releases, or compiles SQLite from
 * source (minutes here: this machine cannot reach GitHub). prebuild-install also takes the release
 * file from a local folder (`npm_config_better_sqlite3_local_prebuilds`, the way an offline site
 * mirrors it); the file is made from the binary the checkout's own install built for the same
 * version and Node ABI. Returns the environment to install with, or {} when the checkout has no
 * such binary (the install then compiles, as on any machine without the download).
 */
export async function localPrebuilds(dir: string): Promise<Record<string, string>> {
  const pkg = join(ROOT, 'node_modules', 'better-sqlite3');
  if (!existsSync(join(pkg, 'build', 'Release', 'better_sqlite3.node'))) return {};
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`);
  await execa('tar', ['-czf', file, '-C', pkg, 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}
