import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM sealing of secret values. Layout: 12-byte nonce | 16-byte tag | ciphertext.
 * The additional data binds a ciphertext to its row (project, name, version), so a blob copied
 * onto another row fails authentication instead of revealing the wrong secret.
 */
const NONCE = 12;
const TAG = 16;

export function seal(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, cipher.getAuthTag(), ct]);
}

/** Throws when the blob was altered or sealed under another key or row. */
export function open(key: Buffer, blob: Buffer, aad: string): Buffer {
  if (blob.length < NONCE + TAG) throw new Error('ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, NONCE));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(blob.subarray(NONCE, NONCE + TAG));
  return Buffer.concat([decipher.update(blob.subarray(NONCE + TAG)), decipher.final()]);
}

export const valueAad = (projectId: string, name: string, version: number) => `secret:${projectId}:${name}:${version}`;
