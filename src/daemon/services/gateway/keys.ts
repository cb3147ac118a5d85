import { createHash, timingSafeEqual } from 'node:crypto';
import { GATEWAY_SECRET_PREFIX, type GatewayKey } from '../../../api/gateway.js';
import { lowerAlnum, randomString } from '../../ids.js';
import type { KeyRow } from './store.js';

/**
 * Gateway key secrets are `gk_secret_<keyid>_<secret>`: the key id is the lookup handle, only the
 * SHA-256 of the 43-character random part is stored. That part carries ~256 bits, so a fast hash
 * is safe (nothing to guess) and cheap enough to check on every request.
 */
export function mintSecret(): { keyId: string; full: string; hash: string } {
  const keyId = lowerAlnum(12);
  const secret = randomString(43);
  return { keyId, full: `${GATEWAY_SECRET_PREFIX}${keyId}_${secret}`, hash: hashSecret(secret) };
}

const SECRET_RE = /^gk_secret_([a-z0-9]{12})_([A-Za-z0-9]{43})$/;

export function parseSecret(token: string): { keyId: string; secret: string } | undefined {
  const m = SECRET_RE.exec(token);
  return m ? { keyId: m[1]!, secret: m[2]! } : undefined;
}

const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

export function secretMatches(secret: string, hash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** When the key stops working: its own expiry or, once rotated out, the end of the overlap. */
export function keyEnd(k: KeyRow): number | undefined {
  const ends = [k.expires_at, k.superseded_until].filter((v): v is string => Boolean(v)).map((v) => Date.parse(v));
  return ends.length ? Math.min(...ends) : undefined;
}

/** State derived on read (spec 2 §3): revoked at once, expired once its end has passed, else live. */
export function keyState(k: KeyRow, now: number): GatewayKey['state'] {
  if (k.revoked_at) return 'revoked';
  const end = keyEnd(k);
  return end !== undefined && end <= now ? 'expired' : 'live';
}

export function keyView(k: KeyRow, now: number): GatewayKey {
  const end = keyEnd(k);
  return {
    key_id: k.key_id,
    note: k.note,
    state: keyState(k, now),
    created_at: k.created_at,
    ...(end !== undefined ? { expires_at: new Date(end).toISOString() } : {}),
    superseded: Boolean(k.superseded_until),
  };
}
