import type { z } from 'zod';
import type { Identity, LoginResponse } from '../../../api/auth.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { AttemptWindow } from '../../http/rate-limit.js';
import { ApiError, badRequest, notFound, tooMany, unauthorized, unavailable } from '../../http/errors.js';
import { tx } from '../../store/db.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import type { PersonPrincipal, Principal } from './principal.js';
import { keyView, createKey } from './keys.js';
import { keyByRef, keysOfUser, revokeKey, setPassword, userByEmail, userById, type UserRow } from './store.js';
import { startSession } from './sign-in-sessions.js';

export const TOO_MANY_SIGN_INS = 'too many sign-in attempts; wait and retry after the time in Retry-After';

const throttleWindows = new WeakMap<AreaContext, { perIp: AttemptWindow; perAccount: AttemptWindow }>();

/** Sign-in with the throttle of spec 1 §5: attempts are counted per IP and per account. */
export class SignIn {
  private readonly perIp: AttemptWindow;
  private readonly perAccount: AttemptWindow;

  constructor(private readonly ctx: AreaContext) {
    // One pair of windows per daemon: every throttled route (login, invitation accept) shares the counts.
    let w = throttleWindows.get(ctx);
    if (!w) {
      const { signIn } = ctx.config;
      w = { perIp: new AttemptWindow(signIn.perIp, signIn.windowMs, ctx.clock), perAccount: new AttemptWindow(signIn.perAccount, signIn.windowMs, ctx.clock) };
      throttleWindows.set(ctx, w);
    }
    this.perIp = w.perIp;
    this.perAccount = w.perAccount;
  }

  /** Counts one attempt against both windows; throws 429 when either is exhausted. */
  throttle(ip: string, email?: string): void {
    const wait = Math.max(this.perIp.hit(ip), email ? this.perAccount.hit(email.trim().toLowerCase()) : 0);
    if (wait > 0) throw tooMany(TOO_MANY_SIGN_INS, wait);
  }

  async login(body: { email: string; password: string }, ip: string, requestId: string): Promise<z.infer<typeof LoginResponse>> {
    const user = await this.authenticate(body, ip, requestId);
    writeAudit(this.ctx.db, this.ctx.clock, { actor: user.email, action: 'auth.login', target: user.email, requestId });
    return startSession(this.ctx, user, 'password');
  }

  /**
   * Checks an e-mail and password under the throttle (login, and the device approval page);
   * a failure is audited and answers one message for unknown user and wrong password.
   */
  async authenticate(body: { email: string; password: string }, ip: string, requestId: string): Promise<UserRow> {
    this.throttle(ip, body.email);
    const { db } = this.ctx;
    const anyUser = db.prepare('SELECT 1 FROM acct_users LIMIT 1').get();
    if (!anyUser) throw unavailable('user management not initialized');
    const user = userByEmail(db, body.email);
    // Unknown user and wrong password share one message and similar timing (spec 1 §4.2).
    const ok = user ? await verifyPassword(body.password, user.password_hash) : (await verifyPassword(body.password, await decoyHash()), false);
    if (!user || !ok) {
      // The e-mail tried and where from, never the password; the reason is for platform admins, not the caller.
      const tried = body.email.trim().toLowerCase().slice(0, 320);
      writeAudit(db, this.ctx.clock, {
        actor: tried,
        action: 'auth.login_failed',
        target: tried,
        requestId,
        details: { email: tried, source_address: ip, reason: user ? 'wrong password' : 'no such account' },
      });
      throw unauthorized('invalid email or password');
    }
    return user;
  }

  async changePassword(
    p: PersonPrincipal,
    body: { current_password: string; new_password: string },
    ip: string,
    requestId: string,
  ): Promise<z.infer<typeof LoginResponse>> {
    const { db, clock } = this.ctx;
    const user = userById(db, p.userId);
    if (!user) throw unauthorized('account no longer exists');
    // Checking the current password is a sign-in attempt: same windows, same limits (issue 17).
    this.throttle(ip, user.email);
    if (!(await verifyPassword(body.current_password, user.password_hash))) {
      writeAudit(db, clock, {
        actor: user.email,
        action: 'auth.password_change_failed',
        target: user.email,
        requestId,
        details: { email: user.email, source_address: ip, reason: 'current password incorrect' },
      });
      throw unauthorized('current password incorrect');
    }
    if (body.new_password === body.current_password) throw badRequest('new password must differ from the current password');
    const problem = passwordProblem(body.new_password);
    if (problem) throw badRequest(problem);
    const hash = await hashPassword(body.new_password);
    tx(db, () => {
      setPassword(db, user.id, hash, false);
      writeAudit(db, clock, { actor: user.email, action: 'user.change_password', target: user.email, requestId });
    });
    return startSession(this.ctx, userById(db, user.id)!, 'password_change');
  }
}

/** Identity of spec 1 §2.3a; the role is re-read from the store, never taken from the token. */
export function identity(ctx: AreaContext, p: Principal): Identity {
  if (p.kind === 'user') {
    return {
      email: p.email,
      role: p.platformRole,
      must_change_password: p.mustChangePassword,
      ...(p.expiresAt ? { expires_at: p.expiresAt } : {}),
    };
  }
  const project = ctx.db.prepare('SELECT id, slug, short FROM acct_projects WHERE id = ?').get(p.projectId) as
    | { id: string; slug: string; short: string }
    | undefined;
  if (!project) throw unauthorized('credential is bound to a project that no longer exists');
  return {
    email: p.email,
    role: 'user',
    must_change_password: false,
    ...(p.kind === 'service_account' && p.expiresAt ? { expires_at: p.expiresAt } : {}),
    project_id: project.id,
    project_slug: project.slug,
    project_short: project.short,
  };
}

export function listPersonalKeys(ctx: AreaContext, p: PersonPrincipal) {
  return { keys: keysOfUser(ctx.db, p.userId).map((r) => keyView(r, ctx.clock)) };
}

export function createPersonalKey(
  ctx: AreaContext,
  p: PersonPrincipal,
  body: { display_name: string; expires_in_days?: number },
  requestId: string,
) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const { row, secret } = createKey(db, clock, { kind: 'personal', userId: p.userId }, body.display_name, body.expires_in_days);
    writeAudit(db, clock, { actor: p.email, action: 'key.create', target: row.key_id, requestId, details: { kind: 'personal' } });
    return { key: keyView(row, clock), secret, note: 'store this secret now: it is shown only once and cannot be retrieved later' };
  });
}

export function revokePersonalKey(ctx: AreaContext, p: PersonPrincipal, ref: string, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const row = keyByRef(db, ref);
    // Another user's key id is indistinguishable from an unknown one.
    if (!row || row.kind !== 'personal' || row.user_id !== p.userId) throw notFound('key not found');
    revokeKey(db, row.id, new Date(clock.now()).toISOString());
    writeAudit(db, clock, { actor: p.email, action: 'key.revoke', target: row.key_id, requestId, details: { kind: 'personal' } });
    return { revoked: row.key_id, note: 'the key stopped working immediately' };
  });
}

export { ApiError };
