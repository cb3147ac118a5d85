import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { DeviceCode, DeviceError, LoginResponse } from '../../../api/auth.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { ownBaseUrl } from '../../public-address.js';
import { ApiError, unavailable } from '../../http/errors.js';
import { newId, randomString } from '../../ids.js';
import { stmt, tx } from '../../store/db.js';
import { hashSecret } from './api-keys.js';
import { startSession } from './sign-in-sessions.js';
import type { UserRow } from './store.js';

/**
 * Device sign-in in the manner of RFC 8628: the CLI gets a device code (kept secret, polled
 * with) and a user code (typed by the person on the approval page). The store holds only
 * SHA-256 hashes of both, as for API keys: both are random, so a slow KDF would add nothing.
 */
export const deviceMigrations = [
  `
  CREATE TABLE auth_device_codes (
    id TEXT PRIMARY KEY,
    device_hash TEXT NOT NULL UNIQUE,
    user_code_hash TEXT NOT NULL UNIQUE,
    client_name TEXT,
    source_address TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    interval_seconds INTEGER NOT NULL,
    last_polled_ms INTEGER,
    state TEXT NOT NULL CHECK (state IN ('pending','approved','denied','consumed')),
    user_id TEXT,
    decided_at TEXT
  );
  `,
];

/** RFC 8628 §6.1: 20 consonants (no vowels, so no words; no 0/O, 1/I confusion), 8 characters ≈ 34.5 bits. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** Pending codes kept at most; creating codes is anonymous, so the table must not grow without bound. */
const MAX_PENDING = 10_000;
/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval. */
const SLOW_DOWN_STEP_SECONDS = 5;
/** Timers may fire a few milliseconds early; a poll this close to the interval is not "too fast". */
const POLL_SLACK_MS = 100;

interface DeviceRow {
  id: string;
  client_name: string | null;
  source_address: string;
  created_at: string;
  expires_at: string;
  interval_seconds: number;
  last_polled_ms: number | null;
  state: 'pending' | 'approved' | 'denied' | 'consumed';
  user_id: string | null;
}

/** A user code as typed (any case, spaces or dashes) to its canonical `XXXXXXXX`. */
export const normalizeUserCode = (typed: string) => typed.toUpperCase().replace(/[^A-Z]/g, '');
const formatUserCode = (c: string) => `${c.slice(0, 4)}-${c.slice(4)}`;

/** Where people approve codes: the public URL when the server has one, else its own address. */
export const verificationUri = (ctx: AreaContext) => `${ctx.config.publicUrl ?? ownBaseUrl(ctx.config)}/device`;

export function startDeviceSignIn(ctx: AreaContext, body: { client_name?: string }, ip: string): z.infer<typeof DeviceCode> {
  const { db, clock, config } = ctx;
  const now = clock.now();
  const deviceCode = `dc_${randomBytes(32).toString('base64url')}`;
  const userCode = randomString(8, USER_CODE_ALPHABET);
  tx(db, () => {
    // Codes an hour past their expiry have nothing left to tell a poller.
    stmt(db, 'DELETE FROM auth_device_codes WHERE expires_at < ?').run(new Date(now - 3_600_000).toISOString());
    const pending = stmt(db, "SELECT COUNT(*) AS n FROM auth_device_codes WHERE state = 'pending'").get() as { n: number };
    if (pending.n >= MAX_PENDING) throw unavailable('too many device sign-ins are waiting for approval; try again in a few minutes');
    stmt(
      db,
      `INSERT INTO auth_device_codes (id, device_hash, user_code_hash, client_name, source_address, created_at, expires_at, interval_seconds, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
    ).run(newId(), hashSecret(deviceCode), hashSecret(userCode), body.client_name ?? null, ip, new Date(now).toISOString(), new Date(now + config.device.ttlSeconds * 1000).toISOString(), config.device.intervalSeconds);
  });
  const uri = verificationUri(ctx);
  const shown = formatUserCode(userCode);
  return {
    device_code: deviceCode,
    user_code: shown,
    verification_uri: uri,
    verification_uri_complete: `${uri}?user_code=${shown}`,
    expires_in: config.device.ttlSeconds,
    interval: config.device.intervalSeconds,
  };
}

const MESSAGES: Record<DeviceError, string> = {
  authorization_pending: 'authorization pending: the code has not been approved yet',
  slow_down: 'slow down: poll no more often than the interval',
  access_denied: 'access denied: the code was denied on the approval page',
  expired_token: 'the device code expired before it was approved: start again',
  invalid_grant: 'unknown or already used device code',
};

/** RFC 8628 §3.5 errors: 400 in the platform's envelope, the RFC code in `code` (docs/decisions/signin.md). */
export const deviceError = (code: DeviceError, extra: Record<string, unknown> = {}) => new ApiError(400, MESSAGES[code], {}, { code, ...extra });

/** One poll of the CLI: a session once approved, else the RFC's error for where the code stands. */
export async function pollDeviceSignIn(ctx: AreaContext, deviceCode: string, requestId: string): Promise<z.infer<typeof LoginResponse>> {
  const { db, clock } = ctx;
  const now = clock.now();
  // Errors are returned, not thrown, inside the transaction: the poll time and a raised interval
  // must be stored even though the poll fails.
  const outcome = tx(db, (): { error: DeviceError; interval?: number } | { user: UserRow | undefined } => {
    const row = stmt(db, 'SELECT * FROM auth_device_codes WHERE device_hash = ?').get(hashSecret(deviceCode)) as DeviceRow | undefined;
    if (!row || row.state === 'consumed') return { error: 'invalid_grant' };
    if (row.state === 'denied') return { error: 'access_denied' };
    if (row.state === 'pending' && Date.parse(row.expires_at) <= now) return { error: 'expired_token' };
    const tooSoon = row.last_polled_ms !== null && now - row.last_polled_ms < row.interval_seconds * 1000 - POLL_SLACK_MS;
    const interval = tooSoon ? row.interval_seconds + SLOW_DOWN_STEP_SECONDS : row.interval_seconds;
    stmt(db, 'UPDATE auth_device_codes SET last_polled_ms = ?, interval_seconds = ? WHERE id = ?').run(now, interval, row.id);
    if (tooSoon) return { error: 'slow_down', interval };
    if (row.state === 'pending') return { error: 'authorization_pending' };
    // Approved: spent by this poll, so a copied device code cannot sign in a second time.
    stmt(db, "UPDATE auth_device_codes SET state = 'consumed' WHERE id = ?").run(row.id);
    return { user: stmt(db, 'SELECT * FROM acct_users WHERE id = ?').get(row.user_id) as UserRow | undefined };
  });
  if ('error' in outcome) throw deviceError(outcome.error, outcome.interval ? { interval: outcome.interval } : {});
  if (!outcome.user) throw deviceError('invalid_grant');
  writeAudit(db, clock, { actor: outcome.user.email, action: 'auth.login', target: outcome.user.email, requestId, details: { via: 'device' } });
  return startSession(ctx, outcome.user, 'device');
}

export interface PendingCode {
  id: string;
  clientName?: string;
  sourceAddress: string;
  createdAt: string;
}

/** The pending, unexpired code a person typed; undefined for anything else (one answer for all). */
export function pendingCode(ctx: AreaContext, typed: string): PendingCode | undefined {
  const code = normalizeUserCode(typed);
  if (code.length !== 8) return undefined;
  const row = stmt(ctx.db, 'SELECT * FROM auth_device_codes WHERE user_code_hash = ?').get(hashSecret(code)) as DeviceRow | undefined;
  if (!row || row.state !== 'pending' || Date.parse(row.expires_at) <= ctx.clock.now()) return undefined;
  return { id: row.id, ...(row.client_name ? { clientName: row.client_name } : {}), sourceAddress: row.source_address, createdAt: row.created_at };
}

/** Records a signed-in person's decision on a pending code; false when it was no longer pending. */
export function decideDeviceSignIn(ctx: AreaContext, codeId: string, user: UserRow, approve: boolean, requestId: string): boolean {
  const { db, clock } = ctx;
  return tx(db, () => {
    const now = new Date(clock.now()).toISOString();
    const changed = stmt(db, "UPDATE auth_device_codes SET state = ?, user_id = ?, decided_at = ? WHERE id = ? AND state = 'pending' AND expires_at > ?").run(
      approve ? 'approved' : 'denied',
      user.id,
      now,
      codeId,
      now,
    ).changes;
    if (changed) writeAudit(db, clock, { actor: user.email, action: approve ? 'auth.device_approved' : 'auth.device_denied', target: user.email, requestId, details: { device_sign_in: codeId } });
    return changed === 1;
  });
}
