import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AbortError } from '../client/errors.js';

export interface Payload {
  body: Record<string, unknown>;
  /** Where it came from, for the line above the answer. */
  from: string;
}

/**
 * The body `i` invokes with: --data (JSON, or @file as `platform invoke` takes it), else the
 * folder's payload.json read afresh on every press (edit it and press i again), else `{}`.
 */
export function loadPayload(data: string | undefined, dir: string): Payload {
  if (data !== undefined) {
    const fromFile = data.startsWith('@');
    return { body: parseObject(fromFile ? readFileSync(data.slice(1), 'utf8') : data, fromFile ? data.slice(1) : '--data'), from: fromFile ? data.slice(1) : '--data' };
  }
  const file = join(dir, 'payload.json');
  if (existsSync(file)) return { body: parseObject(readFileSync(file, 'utf8'), 'payload.json'), from: 'payload.json' };
  return { body: {}, from: 'an empty payload (pass --data or write payload.json)' };
}

function parseObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new AbortError(`${what} is not JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new AbortError(`${what} must hold a JSON object`);
  return parsed as Record<string, unknown>;
}
