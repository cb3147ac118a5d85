import type { Clock } from '../../clock.js';

/** jose is loaded on first use: it costs ~40 ms of daemon start-up that /healthz does not need. */
const jose = () => import('jose');

export const SESSION_TTL_SECONDS = 12 * 60 * 60;

export interface SessionClaims {
  userId: string;
  email: string;
  /** A hint only: authorization re-reads the role on every request (spec 1 §5). */
  role: string;
  expiresAt: number;
}

/** Stateless signed session tokens (HS256 JWT under the daemon's key), 12 hours, not revocable. */
export class SessionTokens {
  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
  ) {}

  async issue(userId: string, email: string, role: string): Promise<{ token: string; expiresAt: number }> {
    const { SignJWT } = await jose();
    const iat = Math.floor(this.clock.now() / 1000);
    const expiresAt = iat + SESSION_TTL_SECONDS;
    const token = await new SignJWT({ email, role })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuedAt(iat)
      .setExpirationTime(expiresAt)
      .setIssuer('platform')
      .sign(this.key);
    return { token, expiresAt };
  }

  /** Returns the claims, or undefined for any invalid or expired token (treated as no credential). */
  async verify(token: string): Promise<SessionClaims | undefined> {
    try {
      const { jwtVerify } = await jose();
      const { payload } = await jwtVerify(token, this.key, {
        issuer: 'platform',
        algorithms: ['HS256'],
        currentDate: new Date(this.clock.now()),
      });
      if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return undefined;
      return { userId: payload.sub, email: String(payload.email), role: String(payload.role), expiresAt: payload.exp };
    } catch {
      return undefined;
    }
  }
}
