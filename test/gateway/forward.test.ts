import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Forwarder } from '../../src/daemon/services/gateway/forward.js';
import { ApiError } from '../../src/daemon/http/errors.js';

/**
 * The forwarding client on its own: a front server that forwards every request to an origin
 * the test controls, so an origin that refuses connections or never answers can be shown.
 */
describe('gateway forwarding client', () => {
  let front: Server;
  let frontUrl: string;
  let deadOrigin: string;
  let silent: Server;
  let silentOrigin: string;
  const forwarder = new Forwarder(500);
  let target = '';

  beforeAll(async () => {
    // A port that was just free and is closed again: connecting to it is refused.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    deadOrigin = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise<void>((r) => probe.close(() => r()));
    // Accepts the request and never answers.
    silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    silentOrigin = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    front = createServer((req: IncomingMessage, res: ServerResponse) => {
      forwarder.forward(req, res, { origin: target, path: req.url ?? '/', set: {}, drop: new Set() }, { for: '127.0.0.1', proto: 'http', host: 'x' }, 'service web').catch((e) => {
        res.statusCode = e instanceof ApiError ? e.status : 500;
        res.end(e instanceof Error ? e.message : String(e));
      });
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await forwarder.close();
    silent.closeAllConnections();
    await new Promise<void>((r) => silent.close(() => r()));
    await new Promise<void>((r) => front.close(() => r()));
  });

  const call = (path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      request(`${frontUrl}${path}`, { method: 'POST' }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
        .on('error', reject)
        .end('{"a":1}');
    });

  it('a target that refuses the connection is 502 naming the target', async () => {
    target = deadOrigin;
    const r = await call('/anything');
    expect(r.status).toBe(502);
    expect(r.body).toMatch(/^target service web could not be reached: .*ECONNREFUSED/);
  });

  it('a target that accepts but never answers is 504 after the timeout', async () => {
    target = silentOrigin;
    const started = Date.now();
    const r = await call('/slow');
    expect(r.status).toBe(504);
    expect(r.body).toBe('target service web did not answer within 1 s');
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });
});
