import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { masterKeyFor, open, openText, provideMasterKey, seal, sealText } from '../../src/daemon/crypto/sealed.js';
import { ApiError } from '../../src/daemon/http/errors.js';

/** The shared sealing module: AES-256-GCM bound to its row, used by project and agent secrets. */
describe('seal and open', () => {
  const key = randomBytes(32);

  it('round-trips any bytes and never leaves them in the blob', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 2048 }), fc.string(), (bytes, aad) => {
        const plain = Buffer.from(bytes);
        const blob = seal(key, plain, aad);
        expect(blob.length).toBe(12 + 16 + plain.length);
        expect(open(key, blob, aad).equals(plain)).toBe(true);
        if (plain.length >= 8) expect(blob.subarray(28).includes(plain)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses another row (AAD), another key, a flipped bit and a short blob', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.nat(), (text, pos) => {
        const blob = seal(key, Buffer.from(text), 'row-a');
        expect(() => open(key, blob, 'row-b')).toThrow();
        expect(() => open(randomBytes(32), blob, 'row-a')).toThrow();
        const flipped = Buffer.from(blob);
        flipped[pos % flipped.length]! ^= 1;
        expect(() => open(key, flipped, 'row-a')).toThrow();
      }),
      { numRuns: 100 },
    );
    expect(() => open(key, Buffer.alloc(27), 'x')).toThrow(/too short/);
  });
});

describe('text sealing per database', () => {
  it('needs a provided master key (503 otherwise), seals with a prefix and reads rows written before sealing', () => {
    const db = new Database(':memory:');
    expect(() => masterKeyFor(db)).toThrow(ApiError);
    expect(() => sealText(db, 'v', 'a')).toThrow(/no master key/);
    const key = randomBytes(32);
    provideMasterKey(db, () => key);
    const stored = sealText(db, 'hunter2 €', 'agent-secret:1:K');
    expect(stored).toMatch(/^gcm1:/);
    expect(stored).not.toContain('hunter2');
    expect(openText(db, stored, 'agent-secret:1:K')).toBe('hunter2 €');
    expect(openText(db, 'legacy plain value', 'agent-secret:1:K')).toBe('legacy plain value');
    let err: unknown;
    try {
      openText(db, stored, 'agent-secret:2:K');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(500);
    expect((err as ApiError).message).not.toContain('hunter2');
    // A sealed store surfaces as the provider's own error (503), not as corruption.
    provideMasterKey(db, () => {
      throw new ApiError(503, 'sealed');
    });
    expect(() => openText(db, stored, 'agent-secret:1:K')).toThrow(/sealed/);
    db.close();
  });
});
