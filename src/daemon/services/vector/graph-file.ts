import { closeSync, fsync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * The file of one saved graph: a magic, a JSON header and binary sections with their lengths.
 * Written to a temporary file, synced and renamed into place, so a crash leaves the old file or
 * the new one, never half of one.
 */
const MAGIC = Buffer.from('PLVGRAPH');
const VERSION = 1;

/** A graph file written under a temporary name, not yet in place. */
export interface StagedGraphFile {
  /** Flushes the bytes to disk off the event loop, then renames the file into place. */
  commit(): Promise<void>;
  /** Removes the temporary file (a save given up). */
  abort(): void;
}

/**
 * Writes a graph file's bytes now, while the caller holds the graph still (the sections may be
 * live arrays), into the page cache under a temporary name. The flush to disk, which takes most of
 * a save's time, waits for `commit` and runs in the thread pool, so the event loop keeps serving.
 */
export function stageGraphFile(path: string, header: unknown, sections: ArrayBufferView[]): StagedGraphFile {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    const json = Buffer.from(JSON.stringify(header));
    const head = Buffer.alloc(16);
    head.writeUInt32LE(VERSION, 0);
    head.writeUInt32LE(json.length, 4);
    head.writeUInt32LE(sections.length, 8);
    writeAll(fd, MAGIC);
    writeAll(fd, head);
    writeAll(fd, json);
    for (const s of sections) {
      const len = Buffer.alloc(8);
      len.writeDoubleLE(s.byteLength, 0);
      writeAll(fd, len);
      writeAll(fd, Buffer.from(s.buffer, s.byteOffset, s.byteLength));
    }
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  let closed = false;
  const close = () => {
    if (!closed) closeSync(fd);
    closed = true;
  };
  return {
    async commit() {
      try {
        await promisify(fsync)(fd);
      } finally {
        close();
      }
      renameSync(tmp, path);
    },
    abort() {
      close();
      rmSync(tmp, { force: true });
    },
  };
}

function writeAll(fd: number, b: Buffer): void {
  let off = 0;
  while (off < b.length) off += writeSync(fd, b, off, b.length - off);
}

/** Reads a graph file; throws on anything but a whole file of this version. */
export function readGraphFile(path: string): { header: unknown; sections: Uint8Array[] } {
  const buf = readFileSync(path);
  if (buf.length < MAGIC.length + 16 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a saved graph');
  let o = MAGIC.length;
  const version = buf.readUInt32LE(o);
  if (version !== VERSION) throw new Error(`saved graph version ${version}, this daemon reads ${VERSION}`);
  const jsonLen = buf.readUInt32LE(o + 4);
  const count = buf.readUInt32LE(o + 8);
  o += 16;
  if (o + jsonLen > buf.length) throw new Error('saved graph is truncated');
  const header = JSON.parse(buf.toString('utf8', o, o + jsonLen)) as unknown;
  o += jsonLen;
  const sections: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    if (o + 8 > buf.length) throw new Error('saved graph is truncated');
    const len = buf.readDoubleLE(o);
    o += 8;
    if (o + len > buf.length) throw new Error('saved graph is truncated');
    sections.push(buf.subarray(o, o + len));
    o += len;
  }
  if (o !== buf.length) throw new Error('saved graph has trailing bytes');
  return { header, sections };
}

/** fsync, in the thread pool, of a file written by someone else (hnswlib's own index file). */
export async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
