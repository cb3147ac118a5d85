import { stmt, type Db } from '../../store/db.js';
import { TableChanges } from '../../store/table-changes.js';
import type { Clock } from '../../clock.js';
import type { Principal } from './principal.js';
import { parseKey, secretMatches } from './api-keys.js';
import type { SessionTokens } from './session-tokens.js';
import { sessionLive } from './sign-in-sessions.js';

interface KeyRow {
  id: string;
  key_id: string;
  secret_hash: string;
  kind: 'personal' | 'service_account' | 'workload';
  user_id: string | null;
  service_account_id: string | null;
  project_id: string | null;
  workload: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  break_glass_grant_id: string | null;
}

/**
 * Resolves `Authorization: Bearer ...` to a principal by prefix (spec 1 §5); an invalid, expired
 * or revoked credential resolves to undefined and the request proceeds as anonymous. A resolved
 * principal is remembered (docs/decisions/speed-daemon.md) until the token or key expires, and
 * forgotten at once by any change to the tables a resolution reads (a TableChanges over WATCHED): a
 * logout, a key deleted, a password changed or a role taken away is honoured on the next request.
 */
export class CredentialResolver {
  private readonly cache = new Map<string, Resolved>();
  private readonly changes: TableChanges;

  constructor(
    private readonly db: Db,
    private readonly sessions: SessionTokens,
    private readonly clock: Clock,
  ) {
    this.changes = new TableChanges(db, WATCHED);
  }

  async resolve(authorization: string | undefined): Promise<Principal | undefined> {
    if (authorization === undefined) return undefined;
    const generation = this.changes.current();
    const known = this.cache.get(authorization);
    if (known) {
      const now = this.clock.now();
      if (known.generation === generation && now < known.validUntil) {
        if (known.keyRowId !== undefined && now - known.touchedAt >= TOUCH_EVERY_MS) this.touchCached(known, now);
        return known.principal;
      }
      this.cache.delete(authorization);
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) return undefined;
    const token = m[1]!;
    const found = token.startsWith('svc_') ? this.resolveKey(token) : await this.resolveSession(token);
    // Remembered only when nothing changed while resolving (the session check awaits).
    if (found && this.changes.current() === generation) this.remember(authorization, { ...found, generation });
    return found?.principal;
  }

  private remember(authorization: string, r: Resolved): void {
    if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(authorization, r);
  }

  private async resolveSession(token: string): Promise<Omit<Resolved, 'generation'> | undefined> {
    const claims = await this.sessions.verify(token);
    // A logged-out session's tokens stop at once; tokens of versions before sessions had rows carry no sid.
    if (claims?.sessionId && !sessionLive(this.db, claims.sessionId)) return undefined;
    const principal = claims ? this.person(claims.userId, { expiresAt: claims.expiresAt, credential: 'session' }) : undefined;
    return principal && { principal, validUntil: claims!.expiresAt * 1000, touchedAt: 0 };
  }

  /** A cache hit of a key still records its use at minute granularity, as a lookup would. */
  private touchCached(r: Resolved, now: number): void {
    r.touchedAt = now;
    this.db.prepare('UPDATE acct_api_keys SET last_used_at = ? WHERE id = ?').run(new Date(now).toISOString(), r.keyRowId);
  }

  /** A person's principal with the role re-read from the store (the token's claim is only a hint). */
  private person(userId: string | null, via: { expiresAt?: number; credential: 'session' | 'personal_key'; keyId?: string }): Principal | undefined {
    const user = stmt(this.db, 'SELECT id, email, role, must_change_password FROM acct_users WHERE id = ?').get(userId) as
      | { id: string; email: string; role: 'admin' | 'user'; must_change_password: number }
      | undefined;
    if (!user) return undefined;
    return {
      kind: 'user',
      userId: user.id,
      email: user.email,
      platformRole: user.role,
      mustChangePassword: Boolean(user.must_change_password),
      ...via,
    };
  }

  private resolveKey(token: string): Omit<Resolved, 'generation'> | undefined {
    const now = this.clock.now();
    const principal = this.keyPrincipal(token, now);
    if (!principal) return undefined;
    const row = this.lastKeyRow!;
    // Valid until the key expires, or a break-glass grant it was minted under ends.
    const grantEnds = row.break_glass_grant_id ? this.grantExpiry(row.break_glass_grant_id) : Infinity;
    const keyEnds = row.expires_at ? Date.parse(row.expires_at) : Infinity;
    return { principal, validUntil: Math.min(grantEnds, keyEnds), keyRowId: row.id, touchedAt: row.last_used_at && now - Date.parse(row.last_used_at) < TOUCH_EVERY_MS ? Date.parse(row.last_used_at) : now };
  }

  private lastKeyRow: KeyRow | undefined;

  private keyPrincipal(token: string, now: number): Principal | undefined {
    const parsed = parseKey(token);
    if (!parsed) return undefined;
    const row = this.db.prepare('SELECT * FROM acct_api_keys WHERE key_id = ?').get(parsed.keyId) as KeyRow | undefined;
    if (!row || row.revoked_at || !secretMatches(parsed.secret, row.secret_hash)) return undefined;
    if ((row.kind === 'workload') !== parsed.workload) return undefined;
    this.lastKeyRow = row;
    if (row.expires_at && Date.parse(row.expires_at) <= now) return undefined;
    if (row.break_glass_grant_id && !this.grantLive(row.break_glass_grant_id, now)) return undefined;
    this.touch(row, now);
    const expiresAt = row.expires_at ? Math.floor(Date.parse(row.expires_at) / 1000) : undefined;
    if (row.kind === 'personal') return this.person(row.user_id, { expiresAt, credential: 'personal_key', keyId: row.key_id });
    if (row.kind === 'service_account') {
      const sa = this.db
        .prepare(
          `SELECT sa.id, sa.name, sa.project_id, sa.disabled, sa.deleted_at, p.short FROM acct_service_accounts sa
           JOIN acct_projects p ON p.id = sa.project_id WHERE sa.id = ?`,
        )
        .get(row.service_account_id) as
        | { id: string; name: string; project_id: string; disabled: number; deleted_at: string | null; short: string }
        | undefined;
      if (!sa || sa.disabled || sa.deleted_at) return undefined;
      return {
        kind: 'service_account',
        serviceAccountId: sa.id,
        projectId: sa.project_id,
        email: serviceAccountEmail(sa.name, sa.short),
        keyId: row.key_id,
        expiresAt,
      };
    }
    const project = this.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(row.project_id) as
      | { short: string }
      | undefined;
    if (!project || !row.workload) return undefined;
    return {
      kind: 'workload',
      projectId: row.project_id!,
      workload: row.workload,
      keyId: row.key_id,
      email: `${row.workload}@${project.short}.workloads.${INTERNAL_DOMAIN}`,
    };
  }

  /** A key minted under break-glass works only while that grant lives (not ended early, not deleted with its holder). */
  private grantLive(grantId: string, now: number): boolean {
    return this.grantExpiry(grantId) > now;
  }

  private grantExpiry(grantId: string): number {
    const g = stmt(this.db, 'SELECT expires_at FROM acct_project_members WHERE id = ?').get(grantId) as { expires_at: string | null } | undefined;
    return g?.expires_at ? Date.parse(g.expires_at) : 0;
  }

  /** last_used_at at minute granularity: one write per key per minute, not one per request. */
  private touch(row: KeyRow, now: number): void {
    if (row.last_used_at && now - Date.parse(row.last_used_at) < TOUCH_EVERY_MS) return;
    this.db.prepare('UPDATE acct_api_keys SET last_used_at = ? WHERE id = ?').run(new Date(now).toISOString(), row.id);
  }
}

/** A remembered resolution: what it gave, until when, and the change generation it was made in. */
interface Resolved {
  principal: Principal;
  /** Epoch ms: the token's or key's expiry (a break-glass grant's end, if sooner). */
  validUntil: number;
  generation: number;
  /** An API key's row, whose last_used_at a cache hit still keeps current. */
  keyRowId?: string;
  touchedAt: number;
}

/** Resolutions remembered at most (the oldest goes first); one daemon sees few credentials. */
const CACHE_ENTRIES = 4096;
const TOUCH_EVERY_MS = 60_000;

/**
 * Tables a credential's resolution reads (the principal's role, e-mail, project short name and
 * the key's or session's state): any change to them forgets every remembered resolution.
 * last_used_at of keys is left out: it changes once a minute per key in use, and never changes
 * what a key resolves to.
 */
const WATCHED: Record<string, { ignore?: string[] }> = {
  acct_users: {},
  acct_api_keys: { ignore: ['last_used_at'] },
  acct_service_accounts: {},
  acct_projects: {},
  acct_project_members: {},
  auth_sessions: {},
};


/** The platform's internal domain, used in derived service-account e-mails (spec 1 §2.8). */
export const INTERNAL_DOMAIN = 'iam.platform.internal';
export const serviceAccountEmail = (name: string, short: string) => `${name}@${short}.${INTERNAL_DOMAIN}`;
