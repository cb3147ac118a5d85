import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 16 §6: the installed CLI pulls only what it runs. Every package the built CLI and daemon
 * (dist/, the daemon bundle included) import must be a dependency, and every dependency must be
 * imported by them: a package only tests use belongs in devDependencies.
 */
const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  oclif: { plugins?: string[] };
};

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return jsFiles(p);
    return /\.(m|c)?js$/.test(e.name) ? [p] : [];
  });
}

/** Package names of the bare specifiers a file imports, requires or loads with import(). */
function importedPackages(text: string): string[] {
  const out: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"./][^'"]*)['"]/gm;
  for (const m of text.matchAll(re)) {
    const spec = m[1]!;
    // Only what can name a package (code that merely contains `from "` is not an import).
    if (!/^(@[a-z0-9._-]+\/)?[a-z0-9._-]+(\/[\w.@/-]*)?$/i.test(spec)) continue;
    if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!)) continue;
    out.push(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
  }
  return out;
}

describe('dependencies', () => {
  it('what dist/ imports is exactly the dependencies (oclif plugins count as imported)', () => {
    const used = new Set<string>(pkg.oclif.plugins ?? []);
    for (const file of [...jsFiles(join(root, 'dist')), ...jsFiles(join(root, 'bin'))]) {
      for (const name of importedPackages(readFileSync(file, 'utf8'))) used.add(name);
    }
    const deps = Object.keys(pkg.dependencies);
    expect([...used].filter((n) => !deps.includes(n)).sort(), 'imported but not a dependency').toEqual([]);
    expect(deps.filter((n) => !used.has(n)).sort(), 'a dependency nothing installed imports (move it to devDependencies)').toEqual([]);
  });

  it('the packages tests use to play peer clients are devDependencies', () => {
    for (const name of ['cloudevents', 'execa', 'ioredis', 'node-vault', '@qdrant/js-client-rest']) {
      expect(pkg.devDependencies, name).toHaveProperty([name]);
      expect(pkg.dependencies, name).not.toHaveProperty([name]);
    }
  });
});
