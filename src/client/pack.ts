import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { c as tarCreate } from 'tar';

/** Always left out of an upload: version control and the CLI's own state. */
const ALWAYS = ['.git/', '.platform/'];

/**
 * Turns .gitignore / .platformignore lines into matchers (the common subset: `*`, `**`, `?`,
 * a trailing `/` for directories, a leading `/` to anchor, `!` to re-include).
 */
export function ignoreMatcher(lines: string[]): (path: string, isDir: boolean) => boolean {
  const rules = lines
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      let p = negate ? l.slice(1) : l;
      const dirOnly = p.endsWith('/');
      if (dirOnly) p = p.slice(0, -1);
      const anchored = p.startsWith('/') || p.includes('/');
      if (p.startsWith('/')) p = p.slice(1);
      const body = p
        .split('**')
        .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]'))
        .join('.*');
      const re = new RegExp(anchored ? `^${body}(/.*)?$` : `(^|/)${body}(/.*)?$`);
      return { negate, dirOnly, re };
    });
  return (path, isDir) => {
    let ignored = false;
    for (const r of rules) {
      if (r.dirOnly && !isDir && !r.re.test(path.split('/').slice(0, -1).join('/'))) continue;
      if (r.re.test(path)) ignored = !r.negate;
    }
    return ignored;
  };
}

export interface Packed {
  archive: Buffer;
  files: string[];
  skipped: string[];
}

/** Packs a source directory as .tar.gz, honouring .gitignore and .platformignore; symlinks are skipped. */
export async function packDirectory(dir: string): Promise<Packed> {
  const lines = [...ALWAYS];
  for (const f of ['.gitignore', '.platformignore']) if (existsSync(join(dir, f))) lines.push(...readFileSync(join(dir, f), 'utf8').split('\n'));
  const ignored = ignoreMatcher(lines);
  const files: string[] = [];
  const skipped: string[] = [];
  const chunks: Buffer[] = [];
  const stream = tarCreate(
    {
      gzip: true,
      cwd: dir,
      portable: true,
      filter: (p: string) => {
        const rel = relative(dir, join(dir, p)).split(sep).join('/');
        if (!rel || rel === '.') return true;
        const st = lstatSync(join(dir, p));
        if (st.isSymbolicLink()) {
          skipped.push(`${rel} (symlink)`);
          return false;
        }
        if (ignored(rel, st.isDirectory())) return false;
        if (st.isFile()) files.push(rel);
        return true;
      },
    },
    ['.'],
  );
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return { archive: Buffer.concat(chunks), files, skipped };
}

/** The manifest a template writes so `deploy` needs no flags. */
export interface Manifest {
  name?: string;
  framework?: string;
  runtime?: string;
}

export function readManifest(dir: string): Manifest {
  const file = join(dir, 'platform.json');
  if (!existsSync(file)) return {};
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}
