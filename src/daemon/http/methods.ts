import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Vault's clients send `LIST` (the `vault` CLI, hvac's list calls), a method Node's HTTP parser
 * does not know: it fails the request before any handler runs. The edge (see client-errors.ts)
 * re-parses such a request as `GET` with this per-process marker header, and the app restores
 * the method before routing, so routes see `req.method === 'LIST'`. A client cannot forge the
 * marker: its name carries a random secret of this process.
 */
export const LIST_MARK = `x-platform-list-${randomBytes(12).toString('hex')}`;

/** Restores a method the edge had to disguise for Node's parser (today only `LIST`). */
export function restoreMethod(req: IncomingMessage): void {
  if (req.headers[LIST_MARK] === undefined) return;
  delete req.headers[LIST_MARK];
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === LIST_MARK) raw.splice(i, 2);
  if (req.method === 'GET') req.method = 'LIST';
}
