import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../http/errors.js';
import { sendJson, type RequestContext } from '../../http/router.js';
import { guardStore, type Deps } from './deps.js';
import type { TokenRow } from './store.js';
import { lookupToken } from './tokens.js';

/** A Vault-shaped failure: `{errors: [...]}` with Vault's status for the case. */
export class VaultError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
  ) {
    super(errors.join('; '));
  }
}
export const denied = () => new VaultError(403, ['permission denied']);

function tokenOf(req: IncomingMessage): string {
  const header = req.headers['x-vault-token'];
  if (typeof header === 'string' && header) return header;
  const auth = req.headers.authorization ?? '';
  return auth.startsWith('Bearer ') ? auth.slice(7) : '';
}

/** Vault answers every token path with 503 while sealed; so does this store. */
export function requireUnsealed(d: Deps): Buffer {
  const state = d.key.state();
  if (state.state !== 'unsealed') throw new VaultError(503, [state.state === 'sealed' ? 'Vault is sealed' : 'secret store is not configured']);
  return state.key;
}

/** The live read token the request carries, with its raw value; Vault's 403 otherwise. */
export function callerToken(d: Deps, req: IncomingMessage): { token: string; row: TokenRow } {
  const token = tokenOf(req);
  if (!token) throw new VaultError(403, ['permission denied', 'missing client token']);
  const row = guardStore(d, 'token lookup', () => lookupToken(d, token));
  if (!row) throw denied();
  return { token, row };
}

/** The project a `<project_short>` path segment names, when the token belongs to it; 403 otherwise. */
export function tokenProject(d: Deps, row: TokenRow, short: string): { id: string; short: string } {
  const project = d.ctx.db.prepare('SELECT id, short FROM acct_projects WHERE short = ?').get(short) as { id: string; short: string } | undefined;
  if (!project || project.id !== row.project_id) throw denied();
  return project;
}

/** Vault's envelope around a `data` answer. */
export const vaultData = (requestId: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  request_id: requestId,
  lease_id: '',
  renewable: false,
  lease_duration: 0,
  data,
  wrap_info: null,
  warnings: null,
  auth: null,
  ...extra,
});

/**
 * Runs one Vault API handler and answers its failures as Vault does: `{errors: [...]}` with
 * Vault's status, never the platform envelope. An absent secret or version is 404 with no text.
 */
export async function vaultHandler(ctx: RequestContext, fn: () => Promise<unknown> | unknown): Promise<void> {
  try {
    const body = await fn();
    sendJson(ctx.res, 200, body);
  } catch (e) {
    if (e instanceof VaultError) return sendJson(ctx.res, e.status, { errors: e.errors });
    if (e instanceof ApiError) return sendJson(ctx.res, e.status, { errors: e.status === 404 ? [] : [e.message] });
    throw e;
  }
}
