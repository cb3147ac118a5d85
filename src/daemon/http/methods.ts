import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Vault's clients send `LIST` (the `vault` CLI, hvac's list calls), a method Node's HTTP parser
 * does not know: it fails the request before any handler runs. The edge (see client-errors.ts)
 * re-parses such a request as `GET` with this per-process marker header, and the app restores
 * the method before routing: under the Vault API as `GET ?list=true`, elsewhere as `LIST`. A client cannot forge the
 * marker: its name carries a random secret of this process.
 */
/** Only the Vault API takes LIST; anywhere else it stays the unknown method it is (405 or 404). */
const VAULT_PREFIX = '/vault/v1/';

export const LIST_MARK = `x-platform-list-${randomBytes(12).toString('hex')}`;

/** Restores a method the edge had to disguise for Node's parser (today only `LIST`). */
export function restoreMethod(req: IncomingMessage): void {
  if (req.headers[LIST_MARK] === undefined) return;
  delete req.headers[LIST_MARK];
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === LIST_MARK) raw.splice(i, 2);
  if (req.method !== 'GET') return;
  // Vault treats `LIST path` and `GET path?list=true` as one operation, and so do our Vault routes.
  if (req.url?.startsWith(VAULT_PREFIX)) req.url += req.url.includes('?') ? '&list=true' : '?list=true';
  else req.method = 'LIST';
}
