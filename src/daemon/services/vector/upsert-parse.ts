import type { IncomingMessage } from 'node:http';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ApiError, badRequest } from '../../http/errors.js';
import { MAX_JSON_DEPTH, parseJsonBody, readChunks } from '../../http/body.js';
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
/**
 * The body in one piece, from the chunks the event loop moved here as the socket delivered them: in
 * memory this thread keeps for the next body (a fresh 4 MB per batch is page faults), unless it is one
 * chunk already. Memory handed back with an unparsed body is detached, and replaced on the next use.
 */
let assembly = new ArrayBuffer(0);
function assemble(chunks, length) {
  if (chunks.length === 1) return chunks[0];
  if (assembly.byteLength < length) assembly = new ArrayBuffer(Math.ceil(length / workerData.step) * workerData.step);
  const bytes = new Uint8Array(assembly, 0, length);
  let o = 0;
  for (const c of chunks) {
    bytes.set(c, o);
    o += c.byteLength;
  }
  return bytes;
}
parentPort.on('message', ({ seq, chunks, length, maxPoints, distance }) => {
  const bytes = assemble(chunks, length);
  let parsed;
  // A scanner that throws (it should not; coverage tools rewrite function sources) costs only its speed.
  try { parsed = scan(bytes, maxPoints, workerData.maxDepth); } catch { parsed = undefined; }
  if (!parsed) try { parsed = parse(bytes, maxPoints); } catch { parsed = undefined; }
  if (!parsed) return parentPort.postMessage({ seq, bytes }, [bytes.buffer]);
  // The rows leave here in the stored form of the index's distance (as the route looked it up before the parse).
  if (distance === 'cosine') normalizeRows(parsed);
  parsed.storedFor = distance;
  parentPort.postMessage({ seq, parsed }, [parsed.vectors.buffer]);
});
`;

/**
 * The parse threads' nice value: below the event loop (0), above the graph build's worker (10). On 2
 * shared cores the parsers took turns with the event loop at the same priority, so a search waited for
 * a core behind a body's parse; at 5 the scheduler weighs the event loop 3x a parser, a parser 3x the
 * build, and an idle core still runs a parser flat out.
 */
const PARSER_NICE = 5;
/** A parse thread assembles bodies in memory it keeps, grown in steps of 1 MiB (a batch of 256 x 768 is about 4 MB). */
const ASSEMBLY_STEP = 1024 * 1024;
/** The smallest chunk moved to a parse thread as it is; Node's shared Buffer slab (8 KiB) serves only smaller allocations. */
const MOVABLE_CHUNK_BYTES = Buffer.poolSize;

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
type Reply = { seq: number; parsed: Parsed } | { seq: number; bytes: Uint8Array } | { seq: number; failed: true };

/**
 * One core is left to the event loop: on 2 cores two parse threads ingested 7,052 points/s but kept
 * the loop waiting for a core, so searches meanwhile took 11.0 ms p50; one thread ingested 5,988
 * points/s with searches at 7.7 ms (the same run, alternated rounds; docs/decisions/vector-ingestion.md,
 * "Parse threads: one core left to the event loop").
 */
const PARSERS = Math.max(1, Math.min(4, availableParallelism() - 1));

/** A few worker threads parsing upsert bodies; a body goes to the one with the fewest in flight. */
export class UpsertParsers {
  private readonly workers: Array<{ worker: Worker; inFlight: number }> = [];
  private readonly waiting = new Map<number, (r: Reply) => void>();
  private seq = 0;
  private broken = false;

  constructor(private readonly size = PARSERS) {}

  private pick(): { worker: Worker; inFlight: number } | undefined {
    if (this.broken) return undefined;
    if (this.workers.length < this.size) {
      try {
        const worker = new Worker(WORKER, { eval: true, workerData: { maxDepth: MAX_JSON_DEPTH, nice: PARSER_NICE, step: ASSEMBLY_STEP } });
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
    const { chunks, length } = await readChunks(req, limit);
    const joined = () => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
    const ordinary = (bytes = joined()) => parseInput(schema, bytes.length === 0 ? {} : parseJsonBody(bytes), 'body');
    if (length === 0) return ordinary();
    const type = String(req.headers['content-type'] ?? 'application/json');
    if (!/^application\/(.+\+)?json\b/i.test(type) && !/^text\/plain\b/i.test(type)) {
      throw badRequest(`invalid JSON: content type ${type.split(';')[0]} is not application/json`);
    }
    const entry = this.pick();
    if (!entry) return ordinary();
    const seq = this.seq++;
    // The chunks move to the worker as the socket delivered them, and it assembles the body: copying
    // about 60 chunks of 64 KiB into one buffer here was the largest item in the event loop's profile
    // per batch (docs/decisions/vector-ingestion.md, fifth and sixth passes). Node's HTTP parser gives
    // each chunk memory of its own; a chunk sharing its memory (a small one from Node's slab) is
    // copied, as moving it would take the memory from under its owners.
    const moved = chunks.map((c) => (c.byteOffset === 0 && c.buffer.byteLength === c.byteLength && c.byteLength >= MOVABLE_CHUNK_BYTES ? c : new Uint8Array(c)));
    const reply = await new Promise<Reply>((resolve) => {
      this.waiting.set(seq, resolve);
      entry.inFlight++;
      entry.worker.postMessage(
        { seq, chunks: moved, length, maxPoints, distance },
        moved.map((c) => c.buffer as ArrayBuffer),
      );
    });
    if ('failed' in reply) throw new ApiError(503, 'upsert parser stopped: retry the request');
    if (!('parsed' in reply)) return ordinary(Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength));
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

  async stop(): Promise<void> {
    this.broken = true;
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

