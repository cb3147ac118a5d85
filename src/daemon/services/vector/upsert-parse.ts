import type { IncomingMessage } from 'node:http';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ApiError, badRequest } from '../../http/errors.js';
import { MAX_JSON_DEPTH, parseJsonBody, readBody } from '../../http/body.js';
import { parseInput } from '../../http/validate.js';
import type { Distance, UpsertBody } from '../../../api/vector.js';
import type { z } from 'zod';
import { scanUpsert } from './upsert-scan.js';

/** One point of an upsert as the engine takes it: vectors as float32 (or the raw numbers of a bad one). */
export interface UpsertPoint {
  id?: unknown;
  vector: ArrayLike<number>;
  payload?: Record<string, unknown> | null;
  /** Known to pass checkVector's range and norm checks (the scanner's limits are far inside them); the width is still checked. */
  checked?: boolean;
  /**
   * The vector is already in the stored form of this distance (the parse worker normalized it for
   * cosine) and is the caller's own memory: the engine may keep it without a copy.
   */
  storedFor?: Distance;
}

/**
 * Upsert bodies off the event loop. A batch of 256 points at 768 dimensions is about 4 MB of JSON:
 * the depth check, JSON.parse and the schema's per-number checks took about 220 ms of the event
 * loop per batch here, which alone capped acknowledgements near 1,100 points/s and made every
 * search wait behind them. A worker thread does all three for the shape every client sends
 * ({points: [{id, vector, payload}]}) and hands back one float32 array per batch (transferred,
 * not copied); it reads that shape's numbers straight from the bytes (upsert-scan.ts) and keeps
 * JSON.parse for the rest. Anything else, including every body that is wrong, comes back unparsed and takes
 * the router's ordinary path on the event loop, so errors keep their exact messages.
 *
 * The worker's code is inline (eval), as the checkpointer's, so the daemon bundle needs no file.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const F32_MAX = 3.4028234663852886e38;
const MAX_SQUARED_NORM = F32_MAX / 4;
const POINT_KEYS = new Set(['id', 'vector', 'payload']);
const { isAscii } = require('node:buffer');
// Linux keeps a nice value per thread (0 names the calling one): this lowers the parser's thread alone,
// so a request's turn on the event loop (a search, a commit) goes before the next body's parse.
try { require('node:os').setPriority(0, workerData.nice); } catch {}
/** Nesting depth of a parsed value, without recursion (objects and arrays count one level each). */
function depthOf(root, limit) {
  let max = 0;
  const stack = [[root, 1]];
  while (stack.length) {
    const [v, d] = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (d > max && (max = d) > limit) return max;
    for (const k in v) stack.push([v[k], d + 1]);
  }
  return max;
}
const plain = (o) => typeof o === 'object' && o !== null && !Array.isArray(o);
function parse(bytes, maxPoints) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Numbers are ASCII: decoding such a body byte for byte is a copy, not a UTF-8 decode.
  const text = buf.toString(isAscii(buf) ? 'latin1' : 'utf8');
  let body;
  // V8 parses JSON without recursion, so a deep body fails here at worst; the depth limit of the
  // ordinary path is checked on the payloads below (the rest of this shape is 4 levels deep).
  try { body = JSON.parse(text); } catch { return undefined; }
  if (!plain(body)) return undefined;
  const keys = Object.keys(body);
  if (keys.length !== 1 || keys[0] !== 'points') return undefined;
  const points = body.points;
  if (!Array.isArray(points) || points.length < 1 || points.length > maxPoints) return undefined;
  let total = 0;
  for (const p of points) {
    if (!plain(p)) return undefined;
    for (const k in p) if (!POINT_KEYS.has(k)) return undefined;
    if (!Array.isArray(p.vector)) return undefined;
    // An id that is an object or array is refused by the ordinary path (with its own messages).
    if (typeof p.id === 'object' && p.id !== null) return undefined;
    for (const x of p.vector) if (typeof x !== 'number') return undefined;
    if (p.payload !== undefined && p.payload !== null) {
      if (!plain(p.payload) || 3 + depthOf(p.payload, workerData.maxDepth) > workerData.maxDepth) return undefined;
    }
    total += p.vector.length;
  }
  const vectors = new Float32Array(total);
  const lengths = new Int32Array(points.length);
  const raw = [];
  let o = 0;
  points.forEach((p, i) => {
    const v = p.vector;
    let squared = 0, bad = false;
    for (let j = 0; j < v.length; j++) {
      const x = v[j];
      if (Math.abs(x) > F32_MAX) bad = true;
      squared += x * x;
      vectors[o + j] = x;
    }
    // Out of range: the event loop reruns the full check on the numbers as sent, for its message.
    if (bad || !(squared <= MAX_SQUARED_NORM)) raw[i] = v;
    lengths[i] = v.length;
    o += v.length;
  });
  return { ids: points.map((p) => p.id), payloads: points.map((p) => p.payload), vectors, lengths, raw };
}
// The plain shape straight from the bytes (upsert-scan.ts); anything else through JSON.parse.
const scan = (${scanUpsert.toString()});
/**
 * Each row in place at unit length, with the arithmetic of scoring.ts's normalized() (a double sum of
 * the float32 squares, each component divided as a double and stored as float32), so the stored floats
 * are the same bits as when the event loop normalized them. Rows kept raw (out of range) are left alone.
 */
function normalizeRows(parsed) {
  const { vectors, lengths, raw } = parsed;
  let o = 0;
  for (let r = 0; r < lengths.length; r++) {
    const end = o + lengths[r];
    if (!raw[r]) {
      let squared = 0;
      for (let j = o; j < end; j++) squared += vectors[j] * vectors[j];
      const n = Math.sqrt(squared);
      if (n > 0) for (let j = o; j < end; j++) vectors[j] /= n;
    }
    o = end;
  }
}
parentPort.on('message', ({ seq, bytes, maxPoints, distance }) => {
  let parsed;
  // A scanner that throws (it should not; coverage tools rewrite function sources) costs only its speed.
  try { parsed = scan(bytes, maxPoints, workerData.maxDepth); } catch { parsed = undefined; }
  if (!parsed) try { parsed = parse(bytes, maxPoints); } catch { parsed = undefined; }
  if (!parsed) return parentPort.postMessage({ seq, bytes }, [bytes.buffer]);
  // The rows leave here in the stored form of the index's distance (as the route looked it up before the parse).
  if (distance === 'cosine') normalizeRows(parsed);
  parsed.storedFor = distance;
  // The body's memory goes back too: the event loop reads the next body into it.
  parentPort.postMessage({ seq, parsed, bytes }, [parsed.vectors.buffer, bytes.buffer]);
});
`;

/**
 * The parse threads' nice value: below the event loop (0), above the graph build's worker (10). On 2
 * shared cores the parsers took turns with the event loop at the same priority, so a search waited for
 * a core behind a body's parse; at 5 the scheduler weighs the event loop 3x a parser, a parser 3x the
 * build, and an idle core still runs a parser flat out.
 */
const PARSER_NICE = 5;
/** Bodies read into reused memory (see readBody): from 64 KiB to 8 MiB, in 1 MiB steps, at most 16 kept (8 clients' bodies in flight twice). */
const POOLED_MIN_BYTES = 64 * 1024;
const POOLED_MAX_BYTES = 8 * 1024 * 1024;
const POOLED_STEP = 1024 * 1024;
const POOLED_BUFFERS = 16;

interface Parsed {
  ids: unknown[];
  payloads: Array<Record<string, unknown> | null | undefined>;
  vectors: Float32Array;
  lengths: Int32Array;
  raw: Array<number[] | undefined>;
  checked?: true;
  /** The distance whose stored form the rows are in (normalized for cosine), as hinted; undefined: as sent. */
  storedFor?: Distance;
}
type Reply = { seq: number; parsed: Parsed; bytes: Uint8Array } | { seq: number; bytes: Uint8Array } | { seq: number; failed: true };

/** A few worker threads parsing upsert bodies; a body goes to the one with the fewest in flight. */
export class UpsertParsers {
  private readonly workers: Array<{ worker: Worker; inFlight: number }> = [];
  private readonly waiting = new Map<number, (r: Reply) => void>();
  private seq = 0;
  private broken = false;
  /** Memory of parsed bodies, handed back by the workers, for the next bodies to be read into. */
  private readonly spare: ArrayBuffer[] = [];
  /** Every ArrayBuffer readBody read a body into: no one else holds a view of it. */
  private readonly pooled = new WeakSet<ArrayBuffer>();

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism()))) {}

  private pick(): { worker: Worker; inFlight: number } | undefined {
    if (this.broken) return undefined;
    if (this.workers.length < this.size) {
      try {
        const worker = new Worker(WORKER, { eval: true, workerData: { maxDepth: MAX_JSON_DEPTH, nice: PARSER_NICE } });
        worker.unref();
        const entry = { worker, inFlight: 0 };
        worker.on('message', (r: Reply) => {
          entry.inFlight--;
          const done = this.waiting.get(r.seq);
          this.waiting.delete(r.seq);
          done?.(r);
        });
        // A dead worker must not strand requests: they are answered unparsed, and no worker is used again.
        worker.on('error', () => this.fail());
        worker.on('exit', () => this.fail());
        this.workers.push(entry);
      } catch {
        this.broken = true;
        return undefined;
      }
    }
    return this.workers.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
  }

  private fail(): void {
    if (this.broken) return;
    this.broken = true;
    for (const w of this.workers) void w.worker.terminate();
    const pending = [...this.waiting.values()];
    this.waiting.clear();
    // Their bodies moved to the dead worker: the callers are told to retry.
    for (const done of pending) done({ seq: -1, failed: true });
  }

  /**
   * Parses an upsert body: the worker's float32 batch when it has the ordinary shape, else the
   * router's own depth check, JSON.parse and schema on the event loop (the same 400s as any route).
   */
  async parse(
    req: IncomingMessage,
    limit: number,
    schema: z.ZodType<UpsertBody>,
    maxPoints: number,
    distance?: Distance,
  ): Promise<{ points: UpsertPoint[] }> {
    const raw = await this.readBody(req, limit);
    const ordinary = (bytes = raw) => parseInput(schema, bytes.length === 0 ? {} : parseJsonBody(bytes), 'body');
    if (raw.length === 0) return ordinary();
    const type = String(req.headers['content-type'] ?? 'application/json');
    if (!/^application\/(.+\+)?json\b/i.test(type) && !/^text\/plain\b/i.test(type)) {
      throw badRequest(`invalid JSON: content type ${type.split(';')[0]} is not application/json`);
    }
    const entry = this.pick();
    if (!entry) return ordinary();
    const seq = this.seq++;
    // The body's memory moves to the worker when it owns it whole (a large body does), else a copy;
    // a body the worker does not take comes back for the ordinary path.
    // Pooled memory is the daemon's own whatever its size (readBody rounds it up): moved too, else
    // each batch's 4 MB was copied into fresh memory here, the page faults the pool exists to avoid.
    const owned = raw.byteOffset === 0 && (raw.buffer.byteLength === raw.byteLength || this.pooled.has(raw.buffer as ArrayBuffer));
    const bytes = owned ? new Uint8Array(raw.buffer, 0, raw.byteLength) : new Uint8Array(raw);
    const reply = await new Promise<Reply>((resolve) => {
      this.waiting.set(seq, resolve);
      entry.inFlight++;
      entry.worker.postMessage({ seq, bytes, maxPoints, distance }, [bytes.buffer as ArrayBuffer]);
    });
    if ('failed' in reply) throw new ApiError(503, 'upsert parser stopped: retry the request');
    if (!('parsed' in reply)) return ordinary(Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength));
    this.keep(reply.bytes.buffer as ArrayBuffer);
    const { ids, payloads, vectors, lengths, raw: unchecked, checked, storedFor } = reply.parsed;
    const points: UpsertPoint[] = [];
    let o = 0;
    for (let i = 0; i < lengths.length; i++) {
      const n = lengths[i]!;
      const sent = unchecked[i];
      points.push(sent ? { id: ids[i], vector: sent, payload: payloads[i] } : { id: ids[i], vector: vectors.subarray(o, o + n), payload: payloads[i], checked, storedFor });
      o += n;
    }
    return { points };
  }

  /**
   * The body, read into memory a parsed body left behind when its length is declared: a fresh 4 MB
   * buffer per batch (what Buffer.concat makes) cost the event loop about 7 ms of page faults and
   * copying per batch of 256 x 768 under load; copying each chunk into memory already mapped is
   * the copy alone. Chunked bodies and small ones are read as every route reads them.
   */
  private async readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
    const declared = Number(req.headers['content-length']);
    if (!(declared >= POOLED_MIN_BYTES && declared <= Math.min(limit, POOLED_MAX_BYTES))) return readBody(req, limit);
    const fits = this.spare.findIndex((b) => b.byteLength >= declared);
    const memory = fits >= 0 ? this.spare.splice(fits, 1)[0]! : new ArrayBuffer(Math.ceil(declared / POOLED_STEP) * POOLED_STEP);
    this.pooled.add(memory);
    const body = Buffer.from(memory, 0, declared);
    let size = 0;
    for await (const chunk of req) {
      const c = chunk as Buffer;
      // The parser delivers no more than the declared length; this only keeps the copy in bounds.
      if (size + c.length > declared) {
        req.resume();
        throw badRequest(`request body longer than its content-length (${declared} bytes)`);
      }
      body.set(c, size);
      size += c.length;
    }
    return body.subarray(0, size);
  }

  private keep(memory: ArrayBuffer): void {
    if (memory.byteLength >= POOLED_MIN_BYTES && memory.byteLength <= POOLED_MAX_BYTES && this.spare.length < POOLED_BUFFERS) this.spare.push(memory);
  }

  async stop(): Promise<void> {
    this.broken = true;
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}
