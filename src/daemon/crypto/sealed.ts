import { createCipheriv, createDecipheriv } from 'node:crypto';
import { pooledRandom } from '../ids.js';
import type { Db } from '../store/db.js';
import { ApiError, unavailable } from '../http/errors.js';

/**
 * AES-256-GCM sealing shared by every area that keeps values at rest (project secrets, agent
 * secrets). Layout: 12-byte nonce | 16-byte tag | ciphertext. The additional data binds a
 * ciphertext to its row, so a blob copied onto another row fails authentication instead of
 * revealing the wrong value.
 */
const NONCE = 12;
const TAG = 16;

export function seal(key: Buffer, plaintext: Buffer, aad: string | Buffer): Buffer {
  // A fresh random nonce per seal, from the shared pool: one CSPRNG call per ~340 seals.
  const nonce = pooledRandom(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(typeof aad === 'string' ? Buffer.from(aad, 'utf8') : aad);
  const ct = cipher.update(plaintext);
  cipher.final();
  return Buffer.concat([nonce, cipher.getAuthTag(), ct], NONCE + TAG + ct.length);
}

/** Throws when the blob was altered or sealed under another key or row. */
export function open(key: Buffer, blob: Buffer, aad: string): Buffer {
  if (blob.length < NONCE + TAG) throw new Error('ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, NONCE));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(blob.subarray(NONCE, NONCE + TAG));
  return Buffer.concat([decipher.update(blob.subarray(NONCE + TAG)), decipher.final()]);
}

/**
 * The daemon's master key per database. The secrets area owns the key (file, seal state) and
 * provides it here; other areas seal with it without importing the secrets area. One entry per
 * database because tests run several daemons in one process.
 */
const providers = new WeakMap<Db, () => Buffer>();

export function provideMasterKey(db: Db, key: () => Buffer): void {
  providers.set(db, key);
}

/** The master key, or 503 when no area provides one or the store is sealed or unconfigured. */
export function masterKeyFor(db: Db): Buffer {
  const provider = providers.get(db);
  if (!provider) throw unavailable('values cannot be sealed: no master key is configured in this daemon');
  return provider();
}

/** Text columns hold sealed values as this prefix plus base64; anything else is a pre-sealing row. */
const TEXT_PREFIX = 'gcm1:';

/** Seals a string for a TEXT column. */
export function sealText(db: Db, plaintext: string, aad: string): string {
  return TEXT_PREFIX + seal(masterKeyFor(db), Buffer.from(plaintext, 'utf8'), aad).toString('base64');
}

/**
 * Seals several strings of one row with one look-up of the key (a session turn has four). Values
 * that carry no content, the empty string and the empty JSON list, are stored as they are: their
 * ciphertext's length alone would reveal them (0 or 2 bytes), so sealing them hides nothing,
 * and openText reads an unprefixed value as stored. A function's turn usually has no tool calls
 * and no events: half its seals were of `[]` (docs/decisions/speed-daemon.md).
 */
export function sealTexts(db: Db, plaintexts: readonly string[], aad: string): string[] {
  const key = masterKeyFor(db);
  const aadBytes = Buffer.from(aad, 'utf8');
  return plaintexts.map((p) => (p === '' || p === '[]' ? p : TEXT_PREFIX + seal(key, Buffer.from(p, 'utf8'), aadBytes).toString('base64')));
}

/**
 * Opens a string sealed by sealText. A value written before sealing existed (no prefix) is
 * returned as stored; it is sealed on its next write.
 */
export function openText(db: Db, stored: string, aad: string): string {
  if (!stored.startsWith(TEXT_PREFIX)) return stored;
  try {
    return open(masterKeyFor(db), Buffer.from(stored.slice(TEXT_PREFIX.length), 'base64'), aad).toString('utf8');
  } catch (e) {
    if (e instanceof ApiError) throw e;
    // Corruption, not unavailability: the key itself was verified against the store's key check.
    throw new ApiError(500, 'a stored value failed its integrity check: it was altered or copied from another row');
  }
}
