import { request } from 'undici';
import type { TestDaemon } from '../helpers/daemon.js';

export const gw = (projectId: string) => `/v1/projects/${projectId}/gateway`;

/** Calls a gateway address: the daemon's listener with the endpoint's Host header. */
export async function viaHost(d: TestDaemon, host: string, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {}) {
  const res = await request(`${d.url}${opts.path ?? '/'}`, {
    method: (opts.method ?? 'GET') as 'GET',
    headers: { host, ...opts.headers },
    body: opts.body,
    ...(opts.localAddress ? { dispatcher: undefined } : {}),
  });
  const text = await res.body.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // plain text stays text
  }
  return { status: res.statusCode, headers: res.headers, body, text };
}

export const sharedHost = (d: TestDaemon, name: string, short: string) => `${name}-${short}.gw.localhost:${d.port}`;
