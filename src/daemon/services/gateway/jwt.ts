import type { JWTVerifyGetKey } from 'jose';
import { loadJose } from '../../lazy/modules.js';
import type { JwtSettings } from '../../../api/gateway.js';
import type { Clock } from '../../clock.js';
import type { GatewayConfig } from '../../config.js';
import { guardedFetch } from '../../guarded-fetch.js';

/**
 * JWT checks with jose (docs/decisions/gateway.md, "JWT"): the key set of each jwks_uri is
 * fetched once and cached (`jwksMaxAgeSeconds`); a token whose kid is not in the cached set makes
 * jose fetch the set again (at most once per `jwksCooldownMs`), which is how a key rotation at
 * the issuer is picked up. iss and aud are the endpoint's; exp and nbf allow `clockSkewSeconds`.
 */
export class JwtVerifier {
  private readonly sets = new Map<string, JWTVerifyGetKey>();

  constructor(
    private readonly config: GatewayConfig,
    private readonly clock: Clock,
  ) {}

  /** The subject on success; otherwise the reason the token is refused (never the token itself). */
  async verify(token: string, s: JwtSettings): Promise<{ ok: true; subject: string } | { ok: false; reason: string }> {
    const jose = await loadJose();
    try {
      const { payload } = await jose.jwtVerify(token, this.keySet(jose, s.jwks_uri), {
        issuer: s.issuer,
        audience: s.audiences ?? [],
        clockTolerance: this.config.clockSkewSeconds,
        currentDate: new Date(this.clock.now()),
      });
      return { ok: true, subject: typeof payload.sub === 'string' ? payload.sub : '' };
    } catch (e) {
      return { ok: false, reason: reasonOf(jose.errors, e) };
    }
  }

  private keySet(jose: typeof import('jose'), uri: string): JWTVerifyGetKey {
    let set = this.sets.get(uri);
    if (!set) {
      set = jose.createRemoteJWKSet(new URL(uri), {
        cooldownDuration: this.config.jwksCooldownMs,
        cacheMaxAge: this.config.jwksMaxAgeSeconds * 1000,
        timeoutDuration: 5_000,
        // Never the host's own services: the egress policy decides where a jwks_uri may point.
        [jose.customFetch]: guardedFetch(this.config.egressAllow),
      });
      this.sets.set(uri, set);
    }
    return set;
  }
}

function reasonOf(errors: typeof import('jose').errors, e: unknown): string {
  if (e instanceof errors.JWTExpired) return 'token expired (exp is in the past)';
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'iss') return "token issuer (iss) does not match the endpoint's issuer";
    if (e.claim === 'aud') return "token audience (aud) is not one of the endpoint's audiences";
    if (e.claim === 'nbf') return 'token not yet valid (nbf is in the future)';
    return `token claim ${e.claim} is invalid: ${e.reason}`;
  }
  if (e instanceof errors.JWKSNoMatchingKey) return "no key of the endpoint's key set matches the token (unknown kid)";
  if (e instanceof errors.JWSSignatureVerificationFailed) return 'token signature does not verify';
  if (e instanceof errors.JWKSTimeout || e instanceof errors.JOSEError && e.code === 'ERR_JWKS_INVALID') return 'the key set (jwks_uri) could not be read';
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid) return 'malformed token';
  if (e instanceof errors.JOSEError) return `token refused (${e.code})`;
  return `the key set (jwks_uri) could not be fetched: ${(e as Error)?.message ?? e}`;
}
