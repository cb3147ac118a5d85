import { RESERVED_SECRET_NAME, VAULT_MOUNT } from '../../../api/secrets.js';
import type { RequestContext } from '../../http/router.js';
import { guardStore, type Deps } from './deps.js';
import { readValue, secretNotFound } from './service.js';
import * as store from './store.js';
import { callerToken, denied, requireUnsealed, tokenProject, vaultData, vaultHandler, VaultError } from './vault-http.js';

/** `<project_short>/<name>` below the mount, inside the caller's token scope; 403 otherwise. */
function scopedSecret(d: Deps, ctx: RequestContext, params: Record<string, string>) {
  const { row } = callerToken(d, ctx.req);
  const segments = (params.path ?? '').split('/');
  if (params.mount !== VAULT_MOUNT || segments.length !== 2) throw denied();
  const [short, name] = segments as [string, string];
  const project = tokenProject(d, row, short);
  if (row.secret_name !== null && row.secret_name !== name) throw denied();
  if (name === RESERVED_SECRET_NAME) throw new VaultError(404, []);
  return { project, name };
}

/** `?version=N`: absent or 0 is the current version (Vault's reading); anything but digits is 400. */
function wantedVersion(url: URL): number | undefined {
  const raw = url.searchParams.get('version');
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw new VaultError(400, [`invalid version ${JSON.stringify(raw.slice(0, 40))}: a version is a non-negative integer`]);
  return Number(raw) || undefined;
}

/**
 * GET /vault/v1/secret/data/<project_short>/<name>[?version=N]: the Vault KV version 2 read API
 * answered from the platform store, so a stock Vault client reads platform secrets with a read
 * token. A token reads only inside its scope; anything else is Vault's 403 "permission denied",
 * and an absent secret is Vault's 404 with an empty errors list.
 */
export function serveVaultRead(d: Deps, ctx: RequestContext, params: Record<string, string>, url: URL): Promise<void> {
  return vaultHandler(ctx, () => {
    const key = requireUnsealed(d);
    const { project, name } = scopedSecret(d, ctx, params);
    const wanted = wantedVersion(url);
    const v = guardStore(d, 'read', () => readValue(d, key, project.id, name, wanted));
    return vaultData(ctx.requestId, {
      data: { value: v.value },
      metadata: { created_time: v.created_at, custom_metadata: null, deletion_time: '', destroyed: false, version: v.version },
    });
  });
}

/**
 * GET /vault/v1/secret/metadata/<project_short>/<name>: Vault's metadata of one secret (versions
 * with their times, never a value). With `?list=true` (what the LIST method becomes, see
 * src/daemon/http/methods.ts) on `<project_short>[/]`: the names of the project's secrets,
 * for a project-wide token only; a token for one secret has no list right (Vault's 403).
 */
export function serveVaultMetadata(d: Deps, ctx: RequestContext, params: Record<string, string>, url: URL): Promise<void> {
  return vaultHandler(ctx, () => {
    requireUnsealed(d);
    if (url.searchParams.get('list') === 'true') return listNames(d, ctx, params);
    const { project, name } = scopedSecret(d, ctx, params);
    return guardStore(d, 'metadata', () => {
      const row = store.liveSecret(d.ctx.db, project.id, name);
      if (!row) throw secretNotFound(name);
      const versions = store.versions(d.ctx.db, project.id, name);
      return vaultData(ctx.requestId, {
        cas_required: false,
        created_time: row.created_at,
        current_version: row.current_version,
        custom_metadata: null,
        delete_version_after: '0s',
        max_versions: 0,
        oldest_version: versions[0]?.version ?? 0,
        updated_time: row.updated_at,
        versions: Object.fromEntries(
          versions.map((v) => [String(v.version), { created_time: v.created_at, deletion_time: v.destroyed_at ?? '', destroyed: v.destroyed_at !== null }]),
        ),
      });
    });
  });
}

function listNames(d: Deps, ctx: RequestContext, params: Record<string, string>) {
  const { row } = callerToken(d, ctx.req);
  const short = (params.path ?? '').replace(/\/$/, '');
  if (params.mount !== VAULT_MOUNT || !short || short.includes('/')) throw denied();
  const project = tokenProject(d, row, short);
  if (row.secret_name !== null) throw denied();
  const names = guardStore(d, 'list', () => store.listSecrets(d.ctx.db, project.id, RESERVED_SECRET_NAME, -1, 0).map((s) => s.name));
  // Vault answers an empty folder with 404 and no text.
  if (!names.length) throw new VaultError(404, []);
  return vaultData(ctx.requestId, { keys: names });
}
