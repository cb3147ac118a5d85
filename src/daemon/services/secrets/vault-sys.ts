import { ApiError } from '../../http/errors.js';
import { sendJson, type RequestContext } from '../../http/router.js';
import { VAULT_MOUNT } from '../../../api/secrets.js';
import type { Deps } from './deps.js';
import { callerToken, requireUnsealed, vaultData, vaultHandler, VaultError } from './vault-http.js';

/**
 * Vault's seal state of the project secret store: "unsealed" while the master key file opens the
 * store, "sealed" when it is missing or wrong, "not initialized" when the store is switched off
 * (docs/decisions/secrets.md, "Seal state is the file").
 */
function sealState(d: Deps) {
  const state = d.key.state().state;
  return { initialized: state !== 'unconfigured', sealed: state !== 'unsealed' };
}

/** GET /vault/v1/sys/seal-status: no token needed, as in Vault. */
export function serveSealStatus(d: Deps, ctx: RequestContext): void {
  const { initialized, sealed } = sealState(d);
  sendJson(ctx.res, 200, {
    type: 'shamir',
    initialized,
    sealed,
    t: 1,
    n: 1,
    progress: 0,
    nonce: '',
    version: d.ctx.config.version,
    build_date: '',
    migration: false,
    recovery_seal: false,
    storage_type: 'platform',
  });
}

/** A status override of sys/health (`sealedcode=200`...): 100 to 599 as in Vault, else 400. */
function codeParam(url: URL, name: string, fallback: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!/^\d{3}$/.test(raw) || n < 100 || n > 599) throw new ApiError(400, `${name} must be an HTTP status code, got ${JSON.stringify(raw.slice(0, 20))}`);
  return n;
}

/**
 * GET (and HEAD) /vault/v1/sys/health: 200 unsealed, 503 sealed, 501 not initialized, each
 * overridable by `activecode`, `sealedcode`, `uninitcode` as in Vault; this store is never a
 * standby. hvac's `read_health_status()` sends HEAD and reads only the status.
 */
export function serveHealth(d: Deps, ctx: RequestContext, url: URL): void {
  const { initialized, sealed } = sealState(d);
  let status: number;
  try {
    status = !initialized ? codeParam(url, 'uninitcode', 501) : sealed ? codeParam(url, 'sealedcode', 503) : codeParam(url, 'activecode', 200);
  } catch (e) {
    return sendJson(ctx.res, 400, { errors: [(e as Error).message] });
  }
  sendJson(ctx.res, status, {
    initialized,
    sealed,
    standby: false,
    performance_standby: false,
    replication_performance_mode: 'disabled',
    replication_dr_mode: 'disabled',
    server_time_utc: Math.floor(d.ctx.clock.now() / 1000),
    version: d.ctx.config.version,
    cluster_name: 'platform',
    cluster_id: '',
  });
}

/**
 * GET /vault/v1/sys/internal/ui/mounts/<path>: the `vault kv` commands ask which mount a path is on
 * and which KV version it runs before every call. The one mount is `secret/`, KV version 2; any
 * live read token may ask, as any Vault token with a capability on the path may.
 */
export function serveMountInfo(d: Deps, ctx: RequestContext, params: Record<string, string>): Promise<void> {
  return vaultHandler(ctx, () => {
    requireUnsealed(d);
    callerToken(d, ctx.req);
    const path = params.path ?? '';
    if (path !== VAULT_MOUNT && !path.startsWith(`${VAULT_MOUNT}/`)) throw new VaultError(403, ['preflight capability check returned 403, please ensure client\'s policies grant access to the path']);
    return vaultData(ctx.requestId, {
      accessor: 'kv_platform',
      config: { default_lease_ttl: 0, force_no_cache: false, max_lease_ttl: 0 },
      description: 'platform project secrets (read only)',
      external_entropy_access: false,
      local: false,
      options: { version: '2' },
      path: `${VAULT_MOUNT}/`,
      plugin_version: '',
      running_plugin_version: '',
      seal_wrap: false,
      type: 'kv',
      uuid: '',
    });
  });
}
