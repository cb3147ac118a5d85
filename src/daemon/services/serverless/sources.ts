import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { SOURCE_IMAGE_PREFIX, SOURCE_IMAGE_RE } from '../../../api/serverless.js';
import { badRequest, notFound } from '../../http/errors.js';
import { readSourceArchive, type SourceFile } from '../agents/unpack.js';
import { bodyTooLarge } from '../../http/body.js';

/**
 * Source folders of `platform services deploy DIR` (the no-Docker path): the .tar.gz is stored
 * once per content under the state directory and named by its digest, so the same folder
 * uploaded twice is the same image reference and a revision keeps its exact source.
 */

export const sourcesDir = (home: string) => join(home, 'serverless', 'sources');

/** Where the archive of a source reference lives (the data plane builds and runs from it). */
export function sourceArchivePath(home: string, image: string): string | undefined {
  const m = SOURCE_IMAGE_RE.exec(image);
  return m ? join(sourcesDir(home), m[1]!, `sha256-${m[2]}.tar.gz`) : undefined;
}

export const sourceImage = (short: string, hex: string) => `${SOURCE_IMAGE_PREFIX}${short}/sha256-${hex}`;

/** Streams the body to a temporary file with the cap enforced, hashing as it goes; returns the digest hex and size. */
export async function receiveSource(req: IncomingMessage, home: string, short: string, maxBytes: number): Promise<{ hex: string; size: number; path: string }> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw bodyTooLarge(maxBytes);
  const dir = join(sourcesDir(home), short);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.upload-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const hash = createHash('sha256');
  let size = 0;
  const out = createWriteStream(tmp);
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        req.resume();
        throw bodyTooLarge(maxBytes);
      }
      hash.update(chunk as Buffer);
      if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
    }
    await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    if (size === 0) throw badRequest('empty body: send the folder as a .tar.gz archive (Content-Type: application/gzip)');
    // The same rules as an agent's code archive: refused whole on the first unsafe entry.
    const files = await readSourceArchive(tmp);
    if (!files.length) throw badRequest('invalid code archive: the archive holds no files');
    const hex = hash.digest('hex');
    const path = join(dir, `sha256-${hex}.tar.gz`);
    if (existsSync(path)) rmSync(tmp, { force: true });
    else renameSync(tmp, path);
    return { hex, size, path };
  } catch (e) {
    out.destroy();
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * The files of an uploaded source (the data plane's SourceReader): the archive is read in memory
 * with the agents' safety rules (no links, no traversal, per-file and expanded-size limits).
 */
export async function readSourceFiles(home: string, image: string): Promise<SourceFile[]> {
  const path = sourceArchivePath(home, image);
  if (!path || !existsSync(path)) throw notFound(`source ${image} not found`);
  return readSourceArchive(path);
}
