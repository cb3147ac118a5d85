import { randomBytes, randomUUID } from 'node:crypto';

export const newId = () => randomUUID();

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const ALNUM_MIXED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random string over an alphabet (rejection sampling avoids modulo bias). */
export function randomString(length: number, alphabet = ALNUM_MIXED): string {
  let out = '';
  while (out.length < length) {
    for (const b of pooledRandom(length * 2)) {
      if (b < 256 - (256 % alphabet.length)) out += alphabet[b % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Immutable lowercase fragment used in hostnames; starts with a letter to stay a DNS label. */
export const newShort = () => randomString(1, 'abcdefghijklmnopqrstuvwxyz') + randomString(5, ALNUM);
export const lowerAlnum = (n: number) => randomString(n, ALNUM);

/** The id of one request, sent back as X-Request-Id and in every error envelope (spec 1 §7). */
export const newRequestId = () => `req_${pooledRandom(12).toString('hex')}`;

/**
 * Random bytes drawn from a pool refilled 4 KiB at a time: one CSPRNG call per ~340 request ids
 * instead of one per request (docs/decisions/speed-daemon.md). Every byte is handed out once, so
 * the bytes serve wherever fresh randomness is needed (ids, AES-GCM nonces). Larger asks than
 * the pool get their own call.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;
export function pooledRandom(n: number): Buffer {
  if (n > POOL_BYTES / 4) return randomBytes(n);
  if (used + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  const out = pool.subarray(used, used + n);
  used += n;
  return out;
}
