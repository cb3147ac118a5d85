import { TOKEN_TTL_DEFAULT, TOKEN_TTL_MAX } from '../../../api/secrets.js';
import { readBody } from '../../http/body.js';
import type { RequestContext } from '../../http/router.js';
import { guardStore, type Deps } from './deps.js';
import * as store from './store.js';
import { accessorOf } from './tokens.js';
import { callerToken, requireUnsealed, vaultData, vaultHandler, VaultError } from './vault-http.js';

/** The single policy a read token carries, named so `vault token lookup` says what it may do. */
const POLICY = 'platform-secret-read';

const seconds = (ms: number) => Math.max(0, Math.floor(ms / 1000));

/** Vault's token description of a read token; never its hash, never who minted it. */
function describe(d: Deps, token: string, row: store.TokenRow) {
  const issued = Date.parse(row.created_at);
  const now = d.ctx.clock.now();
  const short = (d.ctx.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(row.project_id) as { short: string } | undefined)?.short ?? '';
  return {
    accessor: accessorOf(row.hash),
    creation_time: seconds(issued),
    creation_ttl: seconds(row.expires_at - issued),
    display_name: 'platform-read-token',
    entity_id: '',
    expire_time: new Date(row.expires_at).toISOString(),
    explicit_max_ttl: TOKEN_TTL_MAX,
    id: token,
    issue_time: new Date(issued).toISOString(),
    meta: { project: short, scope: row.secret_name ?? '*' },
    num_uses: 0,
    orphan: true,
    path: 'auth/token/create',
    policies: [POLICY],
    renewable: row.expires_at < issued + TOKEN_TTL_MAX * 1000,
    ttl: seconds(row.expires_at - now),
    type: 'service',
  };
}

/** GET /vault/v1/auth/token/lookup-self: what hvac's `is_authenticated()` and `vault token lookup` call. */
export function serveLookupSelf(d: Deps, ctx: RequestContext): Promise<void> {
  return vaultHandler(ctx, () => {
    requireUnsealed(d);
    const { token, row } = callerToken(d, ctx.req);
    return vaultData(ctx.requestId, describe(d, token, row));
  });
}

/** Vault durations: whole seconds as a number or digits, or `1h30m`, `5m`, `300s`. */
export function parseIncrement(raw: unknown): number | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) return raw;
  const m = typeof raw === 'string' ? /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$/.exec(raw) : null;
  if (!m || !(m[1] || m[2] || m[3])) throw new VaultError(400, [`invalid increment ${JSON.stringify(String(raw).slice(0, 40))}: seconds, or a duration such as 300s, 5m or 1h`]);
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

async function incrementOf(ctx: RequestContext): Promise<number | undefined> {
  const raw = (await readBody(ctx.req, 8 * 1024)).toString('utf8').trim();
  if (!raw) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new VaultError(400, ['failed to parse JSON input: the body is not JSON']);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new VaultError(400, ['failed to parse JSON input: expected an object']);
  return parseIncrement((body as { increment?: unknown }).increment);
}

/**
 * POST /vault/v1/auth/token/renew-self: the token lives `increment` seconds from now (default
 * 300, spec 2's token default), but never past 3600 s after it was issued, spec 2's clamp,
 * which plays the part of Vault's explicit max TTL. Capping is reported as Vault reports it, in
 * `warnings`. A renewal never shortens a token.
 */
export function serveRenewSelf(d: Deps, ctx: RequestContext): Promise<void> {
  return vaultHandler(ctx, async () => {
    requireUnsealed(d);
    const { token, row } = callerToken(d, ctx.req);
    const increment = (await incrementOf(ctx)) ?? TOKEN_TTL_DEFAULT;
    const now = d.ctx.clock.now();
    const cap = Date.parse(row.created_at) + TOKEN_TTL_MAX * 1000;
    const wanted = now + increment * 1000;
    const expires = Math.max(row.expires_at, Math.min(wanted, cap));
    guardStore(d, 'renew', () => store.setTokenExpiry(d.ctx.db, row.hash, expires));
    const lease = seconds(expires - now);
    const warnings = wanted > cap ? [`TTL of "${increment}s" exceeded the effective max_ttl of "${lease}s"; TTL value is capped accordingly`] : null;
    return vaultData(ctx.requestId, null, {
      warnings,
      auth: {
        client_token: token,
        accessor: accessorOf(row.hash),
        policies: [POLICY],
        token_policies: [POLICY],
        metadata: null,
        lease_duration: lease,
        renewable: expires < cap,
        entity_id: '',
        token_type: 'service',
        orphan: true,
        mfa_requirement: null,
        num_uses: 0,
      },
    });
  });
}
