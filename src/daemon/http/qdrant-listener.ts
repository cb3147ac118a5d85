import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VECTORDB_PREFIX } from '../../api/vectordb.js';

/**
 * The Qdrant-compatible routes without their `/vectordb` prefix, on a port of their own
 * (`PLATFORM_QDRANT_PORT`, off unless set): Qdrant clients that cannot take a path prefix (the
 * official clients other than JS and Python, tools that take only host and port) point at it as
 * at a Qdrant server. Every path is put under the prefix, so nothing but the direct routes can be
 * reached through it, and the same direct token (api-key header or bearer) opens them.
 */
export async function startQdrantListener(
  host: string,
  port: number,
  handler: RequestListener,
  edgeServer: (handler: RequestListener, pathOf: (path: string) => string) => Server,
): Promise<Server> {
  const prefixed = (path: string) => VECTORDB_PREFIX + (path.startsWith('/') ? path : `/${path}`);
  const server = edgeServer((req, res) => {
    req.url = prefixed(req.url ?? '/');
    return handler(req, res);
  }, prefixed);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export const listenerPort = (s: Server) => (s.address() as AddressInfo).port;
