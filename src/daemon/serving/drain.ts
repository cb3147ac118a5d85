import type { Server } from 'node:http';

/**
 * Stops accepting on a listener and lets what is in flight finish (requests, NDJSON streams,
 * log follows) until `deadlineMs`, then cuts what is left. Connections idle between keep-alive
 * requests are closed as they become idle, so a client's pool cannot hold the stop open.
 */
export function drain(server: Server, deadlineMs: number): Promise<'drained' | 'deadline'> {
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const deadline = setTimeout(() => {
      clearInterval(idle);
      server.closeAllConnections();
      resolve('deadline');
    }, deadlineMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(deadline);
      resolve('drained');
    });
  });
}
