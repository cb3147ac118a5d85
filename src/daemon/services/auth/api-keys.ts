import { createHash, timingSafeEqual } from 'node:crypto';
import { lowerAlnum, randomString } from '../../ids.js';

export type KeyKind = 'personal' | 'service_account' | 'workload';

/**
 * API keys are `svc_<keyid>_<secret>`; workload keys `svc_wl_<keyid>_<secret>`. The key id is the
 * lookup handle; only SHA-256 of the 40-character random secret is stored, which is safe for
 * high-entropy secrets (no dictionary to attack) and cheap enough to re-check on every request.
 */
export function mintKey(kind: KeyKind): { keyId: string; secret: string; full: string; hash: string } {
  const keyId = lowerAlnum(12);
  const secret = randomString(40);
  const full = kind === 'workload' ? `svc_wl_${keyId}_${secret}` : `svc_${keyId}_${secret}`;
  return { keyId, secret, full, hash: hashSecret(secret) };
}

export function parseKey(token: string): { keyId: string; secret: string; workload: boolean } | undefined {
  const m = /^svc_(wl_)?([a-z0-9]{12})_([A-Za-z0-9]{40})$/.exec(token);
  return m ? { workload: Boolean(m[1]), keyId: m[2]!, secret: m[3]! } : undefined;
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

export function secretMatches(secret: string, hash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
