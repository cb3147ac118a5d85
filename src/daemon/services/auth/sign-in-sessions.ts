import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { LoginResponse } from '../../../api/auth.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { unauthorized } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { stmt, tx, type Db } from '../../store/db.js';
import { hashSecret } from './api-keys.js';
import type { UserRow } from './store.js';

/** How a sign-in session began; kept for the audit trail and `platform sessions`-style views later. */
export type SessionOrigin = 'password' | 'device' | 'password_change' | 'setup';

/**
 * A rotated-out refresh token presented again within this many seconds is refused without
 * ending the session: two commands of one CLI refreshing at once race, and the loser finds the
 * winner's token in the credential store. Later, a reused token means it was copied, and the
 * session ends (OAuth 2.1 §4.3.1, refresh token rotation with reuse detection).
 */
const ROTATION_GRACE_SECONDS = 60;

export const signInSessionMigrations = [
  `
  CREATE TABLE auth_sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    refresh_hash TEXT NOT NULL UNIQUE,
    previous_refresh_hash TEXT,
    rotated_at TEXT,
    created_at TEXT NOT NULL,
    refresh_expires_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE INDEX auth_sessions_previous ON auth_sessions(previous_refresh_hash);
  CREATE INDEX auth_sessions_user ON auth_sessions(user_id);
  `,
];

interface SessionRow {
  id: string;
  user_id: string;
  refresh_hash: string;
  previous_refresh_hash: string | null;
  rotated_at: string | null;
  refresh_expires_at: string;
  revoked_at: string | null;
}

const REFRESH_PREFIX = 'rt_';
const newRefreshToken = () => REFRESH_PREFIX + randomBytes(32).toString('base64url');
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Starts a sign-in session: a row holding only the hash of a refresh token, and a session token
 * whose `sid` claim names the row, so revoking the row ends the token before it expires.
 */
export async function startSession(ctx: AreaContext, user: UserRow, origin: SessionOrigin): Promise<z.infer<typeof LoginResponse>> {
  const refresh = newRefreshToken();
  const id = newId();
  const now = ctx.clock.now();
  const refreshExpires = now + ctx.config.sessions.refreshTtlSeconds * 1000;
  stmt(ctx.db, 'INSERT INTO auth_sessions (id, user_id, origin, refresh_hash, created_at, refresh_expires_at) VALUES (?, ?, ?, ?, ?, ?)').run(
    id,
    user.id,
    origin,
    hashSecret(refresh),
    iso(now),
    iso(refreshExpires),
  );
  return sessionResponse(ctx, user, id, refresh, refreshExpires);
}

async function sessionResponse(ctx: AreaContext, user: UserRow, sessionId: string, refresh: string, refreshExpires: number): Promise<z.infer<typeof LoginResponse>> {
  const { token, expiresAt } = await ctx.sessions.issue(user.id, user.email, user.role, sessionId);
  return {
    token,
    email: user.email,
    role: user.role,
    must_change_password: Boolean(user.must_change_password),
    expires_at: expiresAt,
    refresh_token: refresh,
    refresh_expires_at: Math.floor(refreshExpires / 1000),
  };
}

export const REFRESH_REFUSED = 'refresh token invalid, expired or revoked: sign in again';

/** Trades a refresh token for a new session token and a new refresh token (the old one stops working). */
export async function refreshSession(ctx: AreaContext, refreshToken: string, requestId: string): Promise<z.infer<typeof LoginResponse>> {
  const { db, clock } = ctx;
  const hash = hashSecret(refreshToken);
  const now = clock.now();
  const next = newRefreshToken();
  const outcome = tx(db, () => {
    const row = stmt(db, 'SELECT * FROM auth_sessions WHERE refresh_hash = ?').get(hash) as SessionRow | undefined;
    if (!row) {
      const reused = stmt(db, 'SELECT * FROM auth_sessions WHERE previous_refresh_hash = ?').get(hash) as SessionRow | undefined;
      if (reused && !reused.revoked_at && now - Date.parse(reused.rotated_at!) > ROTATION_GRACE_SECONDS * 1000) {
        stmt(db, 'UPDATE auth_sessions SET revoked_at = ? WHERE id = ?').run(iso(now), reused.id);
        const user = stmt(db, 'SELECT email FROM acct_users WHERE id = ?').get(reused.user_id) as { email: string } | undefined;
        writeAudit(db, clock, { actor: user?.email ?? 'anonymous', action: 'auth.refresh_reused', target: user?.email ?? reused.user_id, requestId, details: { session: reused.id } });
      }
      return undefined;
    }
    if (row.revoked_at || Date.parse(row.refresh_expires_at) <= now) return undefined;
    const user = stmt(db, 'SELECT * FROM acct_users WHERE id = ?').get(row.user_id) as UserRow | undefined;
    if (!user) return undefined;
    // Each refresh extends the session (sliding, as gh's and gcloud's refresh tokens): an idle CLI
    // signs in again after the refresh lifetime, a used one does not.
    const refreshExpires = now + ctx.config.sessions.refreshTtlSeconds * 1000;
    stmt(db, 'UPDATE auth_sessions SET previous_refresh_hash = refresh_hash, refresh_hash = ?, rotated_at = ?, refresh_expires_at = ? WHERE id = ?').run(
      hashSecret(next),
      iso(now),
      iso(refreshExpires),
      row.id,
    );
    return { user, sessionId: row.id, refreshExpires };
  });
  if (!outcome) throw unauthorized(REFRESH_REFUSED);
  return sessionResponse(ctx, outcome.user, outcome.sessionId, next, outcome.refreshExpires);
}

/**
 * Ends the sign-in session of a session token (even an expired one signed by this daemon) or of a
 * refresh token (RFC 7009). Answers whether a live session ended; an unknown token is not an error.
 */
export async function revokeSession(ctx: AreaContext, token: string, requestId: string): Promise<{ revoked: boolean }> {
  const { db, clock } = ctx;
  let sessionId: string | undefined;
  if (token.startsWith(REFRESH_PREFIX)) {
    const hash = hashSecret(token);
    sessionId = (stmt(db, 'SELECT id FROM auth_sessions WHERE refresh_hash = ? OR previous_refresh_hash = ?').get(hash, hash) as { id: string } | undefined)?.id;
  } else {
    sessionId = (await ctx.sessions.claimsIgnoringExpiry(token))?.sessionId;
  }
  if (!sessionId) return { revoked: false };
  return tx(db, () => {
    const row = stmt(db, 'SELECT s.id, u.email FROM auth_sessions s LEFT JOIN acct_users u ON u.id = s.user_id WHERE s.id = ? AND s.revoked_at IS NULL').get(sessionId) as
      | { id: string; email: string | null }
      | undefined;
    if (!row) return { revoked: false };
    stmt(db, 'UPDATE auth_sessions SET revoked_at = ? WHERE id = ?').run(iso(clock.now()), row.id);
    writeAudit(db, clock, { actor: row.email ?? 'anonymous', action: 'auth.logout', target: row.email ?? '', requestId, details: { session: row.id } });
    return { revoked: true };
  });
}

/** Whether the sign-in session a session token names is still live (checked on every request). */
export function sessionLive(db: Db, sessionId: string): boolean {
  const row = stmt(db, 'SELECT revoked_at FROM auth_sessions WHERE id = ?').get(sessionId) as { revoked_at: string | null } | undefined;
  return Boolean(row && !row.revoked_at);
}
