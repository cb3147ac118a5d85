import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest } from './errors.js';

/**
 * Reads the whole request body with a byte cap. The cap is enforced while streaming so an
 * oversized upload is refused without buffering it; a declared Content-Length over the cap is
 * refused before reading.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw bodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw bodyTooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw badRequest(`invalid JSON: ${(e as Error).message}`);
  }
}
