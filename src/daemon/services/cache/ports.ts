import { createServer } from 'node:net';

/** Asks the kernel for a free loopback port by binding port 0, then releases it. */
function probeFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Picks a loopback port no instance holds. Ports are recorded on the instance row and kept across
 * restarts so connection details never change; `taken` is every port already recorded.
 */
export async function allocatePort(taken: (port: number) => boolean): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await probeFreePort();
    if (!taken(port)) return port;
  }
  throw new Error('no free loopback port found after 20 attempts');
}
