import type { IncomingMessage, RequestListener, Server } from 'node:http';

/**
 * The daemon's internal listener (`PLATFORM_INTERNAL_PORT`, loopback, 0 = any free port): the
 * address of private MCP servers, reachable only by the platform's workloads and the daemon
 * itself (docs/decisions/mcp.md). Requests that arrive on it are marked so the app serves only
 * the path routes there and the main listener can refuse a private server's path.
 */
const internal = new WeakSet<IncomingMessage>();

export const arrivedOnInternalListener = (req: IncomingMessage) => internal.has(req);

export async function startInternalListener(host: string, port: number, handler: RequestListener, edgeServer: (handler: RequestListener) => Server): Promise<Server> {
  const server = edgeServer((req, res) => {
    internal.add(req);
    return handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
