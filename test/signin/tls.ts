import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { testCaWithPems } from '../helpers/test-ca.js';

/** The CA and certificate an in-test https server presents (PEM text). */
export type TestCa = ReturnType<typeof testCaWithPems>;
export const makeTestCa = (dir: string): TestCa => testCaWithPems(dir);

/**
 * An https front for a daemon, as a TLS-terminating reverse proxy would be: every request and
 * response is streamed through unchanged (streams stay streams).
 */
export async function tlsProxy(ca: TestCa, upstream: string): Promise<{ server: Server; url: string }> {
  const to = new URL(upstream);
  const server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const out = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
