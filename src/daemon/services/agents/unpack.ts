import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import type { ReadEntry } from 'tar';
import { LIMITS } from '../../../api/agents.js';
import { badRequest } from '../../http/errors.js';
import { loadTar } from '../../lazy/modules.js';

export interface SourceFile {
  path: string;
  content: Buffer;
  mode: number;
}

export interface UnpackLimits {
  fileBytes: number;
  files: number;
  expandedBytes: number;
}

export const DEFAULT_UNPACK_LIMITS: UnpackLimits = { fileBytes: LIMITS.fileBytes, files: LIMITS.files, expandedBytes: LIMITS.expandedBytes };

/**
 * Normalizes an archive or file-route path to a relative POSIX path, or explains why it is
 * refused. Absolute paths, `..` segments and NUL bytes are path traversal (spec 1 §4.12).
 */
export function safeRelativePath(raw: string): string | { refused: string } {
  if (raw.includes('\0')) return { refused: `path ${JSON.stringify(raw)} contains a NUL byte` };
  if (raw.startsWith('/') || /^[A-Za-z]:[\\/]/.test(raw)) return { refused: `absolute path ${raw} is not allowed` };
  const parts = raw.split(/[\\/]+/).filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) return { refused: `path traversal in ${raw} is not allowed` };
  if (!parts.length) return { refused: 'empty path' };
  return posix.join(...parts);
}

/**
 * Reads a .tar.gz source archive into memory without ever writing to disk, so no entry can
 * escape a directory. The whole archive is refused on the first unsafe entry: symlinks,
 * hard links, devices, path traversal, a file over 1 MiB, more than 200 files, or more than
 * 64 MiB expanded. Directories are implied by file paths and skipped.
 */
export async function readSourceArchive(file: string, limits: UnpackLimits = DEFAULT_UNPACK_LIMITS): Promise<SourceFile[]> {
  const files = new Map<string, SourceFile>();
  let expanded = 0;
  let failure: Error | undefined;
  const fail = (message: string) => {
    failure ??= badRequest(`invalid code archive: ${message}`);
  };
  const parser = new (loadTar().Parser)({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      if (failure) return entry.resume();
      const type = entry.type;
      if (type === 'Directory' || type === 'GNUDumpDir') return entry.resume();
      if (type === 'SymbolicLink') return fail(`symlink ${entry.path} is not allowed`), entry.resume();
      if (type === 'Link') return fail(`hard link ${entry.path} is not allowed`), entry.resume();
      if (type !== 'File' && type !== 'OldFile' && type !== 'ContiguousFile') return fail(`entry ${entry.path} has unsupported type ${type}`), entry.resume();
      const path = safeRelativePath(entry.path);
      if (typeof path !== 'string') return fail(path.refused), entry.resume();
      if (entry.size > limits.fileBytes) return fail(`file ${path} is ${entry.size} bytes; the limit is ${limits.fileBytes} bytes per file`), entry.resume();
      expanded += entry.size;
      if (expanded > limits.expandedBytes) return fail(`archive expands past ${limits.expandedBytes} bytes`), entry.resume();
      if (!files.has(path) && files.size + 1 > limits.files) return fail(`archive holds more than ${limits.files} files`), entry.resume();
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => files.set(path, { path, content: Buffer.concat(chunks), mode: (entry.mode ?? 0o644) & 0o777 }));
    },
  });
  await new Promise<void>((resolve) => {
    parser.on('error', (e: Error) => {
      fail(`not a readable .tar.gz (${e.message})`);
      resolve();
    });
    parser.on('end', () => resolve());
    parser.on('close', () => resolve());
    createReadStream(file)
      .on('error', (e) => {
        fail(e.message);
        resolve();
      })
      .pipe(parser as unknown as NodeJS.WritableStream);
  });
  if (failure) throw failure;
  if (!files.size) throw badRequest('invalid code archive: it holds no files');
  return [...files.values()];
}
