import { randomBytes, randomUUID } from 'node:crypto';

export const newId = () => randomUUID();

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const ALNUM_MIXED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random string over an alphabet (rejection sampling avoids modulo bias). */
export function randomString(length: number, alphabet = ALNUM_MIXED): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
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
export const newRequestId = () => `req_${randomBytes(12).toString('hex')}`;
