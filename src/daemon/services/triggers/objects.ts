import { lstatSync, mkdirSync, readdirSync, realpathSync, type Stats } from 'node:fs';
import { join, sep } from 'node:path';
import { BUCKET_NAME_RE, OBJECT_KEY_MAX } from '../../../api/triggers.js';
import { badRequest, notFound } from '../../http/errors.js';

/**
 * Local buckets (docs/decisions/triggers.md): a project bucket is the folder
 * <home>/objects/<project_short>/<bucket>/, filled by `platform objects put` or a plain file copy.
 * Keys are relative paths inside it; nothing may name or reach a file outside the folder: `.`,
 * `..` and dot-leading segments (temporary uploads), absolute paths, backslashes, NUL and
 * symbolic links anywhere on the way are refused or ignored.
 */
export const objectsRoot = (home: string) => join(home, 'objects');
export const bucketDir = (home: string, short: string, bucket: string) => join(objectsRoot(home), short, bucket);
export const objectFile = (home: string, short: string, bucket: string, key: string) => join(bucketDir(home, short, bucket), ...key.split('/'));

export function checkBucket(bucket: string, field = 'bucket'): string {
  if (!BUCKET_NAME_RE.test(bucket)) throw badRequest(`invalid ${field} ${JSON.stringify(bucket)}: 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit`);
  return bucket;
}

/** Why a key is refused, or undefined when it is a plain relative path. */
export function keyProblem(key: string): string | undefined {
  if (!key) return 'the key is empty';
  if (Buffer.byteLength(key) > OBJECT_KEY_MAX) return `the key exceeds ${OBJECT_KEY_MAX} bytes`;
  if (key.startsWith('/')) return 'the key is an absolute path';
  if (/[\\\0]/.test(key) || /[\x00-\x1f\x7f]/.test(key)) return 'the key contains a backslash or a control character';
  for (const seg of key.split('/')) {
    if (seg === '') return 'the key has an empty segment (// or a trailing /)';
    if (seg === '.' || seg === '..') return 'the key has a . or .. segment';
    if (seg.startsWith('.')) return 'a key segment may not start with a dot (reserved for uploads in progress)';
  }
  return undefined;
}

export function checkKey(key: string): string {
  const p = keyProblem(key);
  if (p) throw badRequest(`invalid object key ${JSON.stringify(key.slice(0, 200))}: ${p}`);
  return key;
}

/**
 * The object's regular file, refusing symbolic links on every segment (a link planted in the
 * folder must not expose a file elsewhere): 404 when absent or not a plain file.
 */
export function statObject(home: string, short: string, bucket: string, key: string): Stats {
  const dir = bucketDir(home, short, bucket);
  let path = dir;
  let st: Stats | undefined;
  try {
    if (!lstatSync(dir).isDirectory()) throw new Error('not a folder');
    for (const seg of key.split('/')) {
      path = join(path, seg);
      st = lstatSync(path);
      if (st.isSymbolicLink()) throw new Error('symbolic link');
    }
  } catch {
    throw notFound(`object ${key} not found in bucket ${bucket}`);
  }
  if (!st?.isFile()) throw notFound(`object ${key} not found in bucket ${bucket}`);
  // Defence in depth: the resolved path must still be inside the bucket folder.
  if (!realpathSync(path).startsWith(realpathSync(dir) + sep)) throw notFound(`object ${key} not found in bucket ${bucket}`);
  return st;
}

export function ensureBucket(home: string, short: string, bucket: string): string {
  const dir = bucketDir(home, short, bucket);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export interface ObjectEntry {
  key: string;
  size: number;
  mtimeMs: number;
}

/** Every plain file of a bucket, by key; links, dot-files and odd names are skipped. */
export function walkBucket(dir: string, prefix = ''): ObjectEntry[] {
  const out: ObjectEntry[] = [];
  const walk = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const key = rel ? `${rel}/${name}` : name;
      let st: Stats;
      try {
        st = lstatSync(join(d, name));
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(join(d, name), key);
      else if (st.isFile() && !keyProblem(key) && key.startsWith(prefix)) out.push({ key, size: st.size, mtimeMs: Math.floor(st.mtimeMs) });
    }
  };
  walk(dir, '');
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
