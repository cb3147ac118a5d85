import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest } from './errors.js';

/**
 * Reads the whole request body with a byte cap. The cap is enforced while streaming so an
 * oversized upload is refused without buffering it; a declared Content-Length over the cap is
 * refused before reading.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const { chunks, length } = await readChunks(req, limit);
  return Buffer.concat(chunks, length);
}

/** The body's chunks as the socket delivered them, not joined, under readBody's cap and its 413s. */
export async function readChunks(req: IncomingMessage, limit: number): Promise<{ chunks: Buffer[]; length: number }> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw bodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req) {
    length += (chunk as Buffer).length;
    if (length > limit) {
      req.resume();
      throw bodyTooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return { chunks, length };
}

export function bodyTooLarge(limit: number): ApiError {
  return new ApiError(413, `request body exceeds ${limit} bytes`);
}

/** Parses a JSON body; an empty body is treated as `{}` so bodiless POSTs validate normally. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const raw = await readBody(req, limit);
  if (raw.length === 0) return {};
  const type = String(req.headers['content-type'] ?? 'application/json');
  if (!/^application\/(.+\+)?json\b/i.test(type) && !/^text\/plain\b/i.test(type)) {
    throw badRequest(`invalid JSON: content type ${type.split(';')[0]} is not application/json`);
  }
  return parseJsonBody(raw);
}

/**
 * Deepest nesting of arrays and objects a request body may have (docs/decisions.md, Conventions).
 * Validators, filter compilers and serializers walk bodies recursively; a body thousands deep
 * would overflow their stack (a RangeError, a 500) instead of being refused.
 */
export const MAX_JSON_DEPTH = 64;

/** JSON.parse with the depth limit checked first, in one pass without recursion; both errors are 400. */
export function parseJsonBody(raw: Buffer | string): unknown {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH) throw badRequest(`invalid JSON: nested more than ${MAX_JSON_DEPTH} levels deep`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`invalid JSON: ${(e as Error).message}`);
  }
}

/** Deepest bracket nesting outside strings; stops counting once past the limit. */
function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > MAX_JSON_DEPTH) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}
