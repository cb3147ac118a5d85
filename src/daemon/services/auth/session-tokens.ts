import type { Clock } from '../../clock.js';

/** jose is loaded on first use: it costs ~40 ms of daemon start-up that /healthz does not need. */
const jose = () => import('jose');

/** Spec 1 §8's session lifetime, the default of PLATFORM_SESSION_TTL_SECONDS. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

export interface SessionClaims {
  userId: string;
  email: string;
  /** A hint only: authorization re-reads the role on every request (spec 1 §5). */
  role: string;
  expiresAt: number;
  /** The sign-in session (auth_sessions row) the token belongs to; revoking it ends the token at once. */
  sessionId?: string;
}

/**
 * Signed session tokens (HS256 JWT under the daemon's key). The signature and expiry are checked
 * here; whether the sign-in session behind the `sid` claim is still live is the resolver's check
 * (auth/sign-in-sessions.ts), so logout takes effect before the token expires.
 */
export class SessionTokens {
  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
    private readonly ttlSeconds = SESSION_TTL_SECONDS,
  ) {}

  async issue(userId: string, email: string, role: string, sessionId?: string): Promise<{ token: string; expiresAt: number }> {
    const { SignJWT } = await jose();
    const iat = Math.floor(this.clock.now() / 1000);
    const expiresAt = iat + this.ttlSeconds;
    const token = await new SignJWT({ email, role, ...(sessionId ? { sid: sessionId } : {}) })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuedAt(iat)
      .setExpirationTime(expiresAt)
      .setIssuer('platform')
      .sign(this.key);
    return { token, expiresAt };
  }

  /**
   * Tokens already verified under this key. A token's signature never needs checking twice; only
   * the expiry is re-checked here (revocation is looked up by the resolver on every request). WebCrypto's async HMAC
   * was about 5 % of the daemon's CPU under a messaging load (one verification per request).
   */
  private readonly verified = new Map<string, SessionClaims>();

  /** Returns the claims, or undefined for any invalid or expired token (treated as no credential). */
  async verify(token: string): Promise<SessionClaims | undefined> {
    const known = this.verified.get(token);
    if (known) {
      if (known.expiresAt * 1000 > this.clock.now()) return known;
      this.verified.delete(token);
    }
    const claims = await this.check(token);
    if (claims) {
      if (this.verified.size >= 1024) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
    }
    return claims;
  }

  /**
   * The claims of a token signed by this daemon even when it has expired: revoking (logout) must
   * work with the token the CLI holds, whatever its age.
   */
  async claimsIgnoringExpiry(token: string): Promise<SessionClaims | undefined> {
    return this.check(token, true);
  }

  private async check(token: string, ignoreExpiry = false): Promise<SessionClaims | undefined> {
    try {
      const { jwtVerify } = await jose();
      const { payload } = await jwtVerify(token, this.key, {
        issuer: 'platform',
        algorithms: ['HS256'],
        currentDate: ignoreExpiry ? new Date(0) : new Date(this.clock.now()),
      });
      if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return undefined;
      const sessionId = typeof payload.sid === 'string' ? payload.sid : undefined;
      return { userId: payload.sub, email: String(payload.email), role: String(payload.role), expiresAt: payload.exp, ...(sessionId ? { sessionId } : {}) };
    } catch {
      return undefined;
    }
  }
}
