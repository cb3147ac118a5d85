import type { IncomingMessage, RequestListener, Server } from 'node:http';

/**
 * The sandbox listener (spec 2 §4.6, PLATFORM_SANDBOX_PORT, loopback, 0 = any free port): the
 * sandbox API has no authentication, so it never shares the daemon's public address. Workloads
 * receive it as SANDBOX_URL; `platform daemon status` reports it. Requests arriving on it are
 * marked so the app serves only the sandbox routes there (and those routes nowhere else).
 */
const arrived = new WeakSet<IncomingMessage>();

export const arrivedOnSandboxListener = (req: IncomingMessage) => arrived.has(req);

export async function startSandboxListener(
  host: string,
  port: number,
  handler: RequestListener,
  edgeServer: (handler: RequestListener, pathOf?: (path: string) => string, listener?: 'sandbox') => Server,
): Promise<Server> {
  const server = edgeServer(
    (req, res) => {
      arrived.add(req);
      return handler(req, res);
    },
    undefined,
    'sandbox',
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
