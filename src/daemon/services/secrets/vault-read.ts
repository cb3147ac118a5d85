import type { IncomingMessage } from 'node:http';
import { RESERVED_SECRET_NAME, VAULT_MOUNT } from '../../../api/secrets.js';
import { ApiError } from '../../http/errors.js';
import { sendJson, type RequestContext } from '../../http/router.js';
import { guardStore, type Deps } from './deps.js';
import { readValue } from './service.js';
import { lookupToken } from './tokens.js';

/** A Vault-shaped failure: `{errors: [...]}` with Vault's status for the case. */
class VaultError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
  ) {
    super(errors.join('; '));
  }
}
const denied = () => new VaultError(403, ['permission denied']);

function tokenOf(req: IncomingMessage): string {
  const header = req.headers['x-vault-token'];
  if (typeof header === 'string' && header) return header;
  const auth = req.headers.authorization ?? '';
  return auth.startsWith('Bearer ') ? auth.slice(7) : '';
}

/**
 * GET /vault/v1/secret/data/<project_short>/<name>[?version=N]: the Vault KV version 2 read API
 * answered from the platform store, so a stock Vault client reads platform secrets with a read
 * token. A token reads only inside its scope; anything else is Vault's 403 "permission denied",
 * and an absent secret is Vault's 404 with an empty errors list.
 */
export async function serveVaultRead(d: Deps, ctx: RequestContext, params: Record<string, string>, url: URL): Promise<void> {
  try {
    const state = d.key.state();
    if (state.state !== 'unsealed') throw new VaultError(503, [state.state === 'sealed' ? 'Vault is sealed' : 'secret store is not configured']);
    const key = state.key;
    const token = tokenOf(ctx.req);
    if (!token) throw new VaultError(403, ['permission denied', 'missing client token']);
    const scope = guardStore(d, 'token lookup', () => lookupToken(d, token));
    if (!scope) throw denied();
    const segments = (params.path ?? '').split('/');
    if (params.mount !== VAULT_MOUNT || segments.length !== 2) throw denied();
    const [short, name] = segments as [string, string];
    const project = d.ctx.db.prepare('SELECT id FROM acct_projects WHERE short = ?').get(short) as { id: string } | undefined;
    if (!project || project.id !== scope.project_id) throw denied();
    if (scope.secret_name !== null && scope.secret_name !== name) throw denied();
    if (name === RESERVED_SECRET_NAME) throw new VaultError(404, []);
    const raw = url.searchParams.get('version');
    const wanted = raw && /^\d+$/.test(raw) ? Number(raw) : undefined;
    const v = guardStore(d, 'read', () => readValue(d, key, project.id, name, wanted));
    sendJson(ctx.res, 200, {
      request_id: ctx.requestId,
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: {
        data: { value: v.value },
        metadata: { created_time: v.created_at, custom_metadata: null, deletion_time: '', destroyed: false, version: v.version },
      },
      wrap_info: null,
      warnings: null,
      auth: null,
    });
  } catch (e) {
    if (e instanceof VaultError) return sendJson(ctx.res, e.status, { errors: e.errors });
    if (e instanceof ApiError) {
      // Vault answers an absent or destroyed version with 404 and no error text.
      return sendJson(ctx.res, e.status, { errors: e.status === 404 ? [] : [e.message] });
    }
    throw e;
  }
}
