import { readFileSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';

/**
 * The file of one saved graph: a magic, a JSON header and binary sections with their lengths.
 * Written to a temporary file, synced and renamed into place, so a crash leaves the old file or
 * the new one, never half of one.
 */
const MAGIC = Buffer.from('PLVGRAPH');
const VERSION = 1;
/** Bytes per write call. */
const WRITE_CHUNK = 8 << 20;

/**
 * Writes a graph file in the thread pool: the sections (live arrays of a graph the caller holds
 * still until this settles) go to a temporary file, which is flushed to disk and renamed into place.
 */
export async function writeGraphFile(path: string, header: unknown, sections: ArrayBufferView[]): Promise<void> {
  const tmp = `${path}.tmp`;
  const file = await open(tmp, 'w', 0o600);
  try {
    const json = Buffer.from(JSON.stringify(header));
    const head = Buffer.alloc(16);
    head.writeUInt32LE(VERSION, 0);
    head.writeUInt32LE(json.length, 4);
    head.writeUInt32LE(sections.length, 8);
    await writeAll(file, Buffer.concat([MAGIC, head, json]));
    for (const s of sections) {
      const len = Buffer.alloc(8);
      len.writeDoubleLE(s.byteLength, 0);
      await writeAll(file, len);
      await writeAll(file, new Uint8Array(s.buffer, s.byteOffset, s.byteLength));
    }
    await file.sync();
  } catch (e) {
    await file.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  }
  await file.close();
  await rename(tmp, path);
}

/** Writes all of `b` (a single write may be partial), in chunks so no one write holds a pool thread long. */
async function writeAll(file: FileHandle, b: Uint8Array): Promise<void> {
  for (let off = 0; off < b.length; ) {
    const { bytesWritten } = await file.write(b, off, Math.min(WRITE_CHUNK, b.length - off));
    off += bytesWritten;
  }
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
