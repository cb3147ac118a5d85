import { request as httpRequest, Agent } from 'node:http';
import type { TestDaemon } from '../helpers/daemon.js';

export const gw = (projectId: string) => `/v1/projects/${projectId}/gateway`;

const keepAlive = new Agent({ keepAlive: true });

export interface HostReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/**
 * Calls a gateway address: the daemon's listener with the endpoint's Host header. node:http so a
 * test can bind the client to another loopback address (127.0.0.2: a peer that is not the
 * trusted proxy), which undici's connector does not offer.
 */
export function viaHost(d: TestDaemon, host: string, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {}): Promise<HostReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: d.port,
        method: opts.method ?? 'GET',
        path: opts.path ?? '/',
        headers: { host, ...opts.headers, ...(opts.body !== undefined ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {}) },
        ...(opts.localAddress ? { localAddress: opts.localAddress } : { agent: keepAlive }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            // plain text stays text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export const sharedHost = (d: TestDaemon, name: string, short: string) => `${name}-${short}.gw.localhost:${d.port}`;
