import { startSession } from './sign-in-sessions.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import type { LoginResponse } from '../../../api/auth.js';
import type { AreaContext } from '../../area.js';
import { bootstrap } from '../../bootstrap.js';
import { writeAudit } from '../../audit.js';
import { ApiError, badRequest, conflict, gone, unauthorized } from '../../http/errors.js';
import { passwordProblem } from './passwords.js';
import { userByEmail } from './store.js';
import type { SignIn } from './service.js';

/** How long a printed setup token works (docs/decisions/server.md, First admin). */
export const SETUP_TOKEN_TTL_MS = 60 * 60 * 1000;

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * The one-time token a server prints at a first start with nobody to sign in. Only its hash is
 * held, in memory: a restart while it is unused prints a new one and the old one stops working.
 */
export class SetupToken {
  private hash?: Buffer;
  private expiresAt = 0;

  issue(now: number): { token: string; expiresAt: number } {
    const token = `setup_${randomBytes(24).toString('base64url')}`;
    this.hash = digest(token);
    this.expiresAt = now + SETUP_TOKEN_TTL_MS;
    return { token, expiresAt: this.expiresAt };
  }

  /** Spends the token when it matches and is in time; it can be spent once. */
  take(token: string, now: number): 'taken' | 'wrong' | 'expired' | 'none' {
    if (!this.hash) return 'none';
    if (!timingSafeEqual(digest(token), this.hash)) return 'wrong';
    if (now >= this.expiresAt) return 'expired';
    this.hash = undefined;
    return 'taken';
  }
}

const tokens = new WeakMap<AreaContext, SetupToken>();

/** The daemon's setup token holder (one per app: the route and the start-up share it). */
export function setupTokenOf(ctx: AreaContext): SetupToken {
  let t = tokens.get(ctx);
  if (!t) tokens.set(ctx, (t = new SetupToken()));
  return t;
}

const ALREADY = 'this platform already has an admin: sign in with `platform login`, or ask an admin for an invitation';

/**
 * POST /v1/auth/setup: the first admin of a server, with the printed token. Creates what a first
 * start of the local daemon creates (org and project `default`, the admin) and signs them in.
 * Attempts count against the sign-in throttle of the client address: the token is a credential.
 */
export async function setUp(
  ctx: AreaContext,
  signIn: SignIn,
  body: { token: string; email: string; password: string },
  ip: string,
  requestId: string,
): Promise<z.infer<typeof LoginResponse>> {
  signIn.throttle(ip);
  const anyUser = ctx.db.prepare('SELECT 1 FROM acct_users LIMIT 1').get();
  if (anyUser) throw conflict(ALREADY);
  const problem = passwordProblem(body.password);
  if (problem) throw badRequest(`password: ${problem}`);
  const outcome = setupTokenOf(ctx).take(body.token.trim(), ctx.clock.now());
  if (outcome === 'none') throw conflict('this platform has no setup token to use; its first admin comes from PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD');
  if (outcome === 'wrong') {
    writeAudit(ctx.db, ctx.clock, { actor: 'anonymous', action: 'auth.setup_failed', target: 'platform', requestId, details: { source_address: ip, reason: 'wrong setup token' } });
    throw unauthorized('invalid setup token');
  }
  if (outcome === 'expired') throw gone('the setup token has expired: restart the server to print a new one');
  const created = await bootstrap(ctx.db, ctx.clock, { email: body.email, password: body.password });
  if (!created) throw conflict(ALREADY);
  const user = userByEmail(ctx.db, created.email);
  if (!user) throw new ApiError(500, 'the first admin was not created');
  writeAudit(ctx.db, ctx.clock, { actor: user.email, action: 'auth.setup', target: user.email, requestId, details: { source_address: ip } });
  return startSession(ctx, user, 'setup');
}
