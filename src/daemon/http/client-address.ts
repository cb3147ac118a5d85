import type { IncomingMessage } from 'node:http';
import { clientAddress, compileRanges, inRanges, parseAddress } from '../services/gateway/allowlist.js';

/** The reverse proxies a server runs behind (`--behind-proxy`), compiled once. */
export type TrustedProxies = ReturnType<typeof compileRanges>;

export const trustedProxies = (cidrs: string[] | undefined): TrustedProxies => compileRanges(cidrs ?? []);

/**
 * The one answer to "which address is this client": the socket peer, or, when the peer is a
 * trusted proxy, the right-most X-Forwarded-For hop that is not itself one. Everything keyed on
 * the client address (sign-in throttling, rate limits, audit source addresses, the widget's
 * per-address limit, the access log) takes it from here, through the request context's `ip`.
 */
export function clientAddressOf(req: IncomingMessage, trusted: TrustedProxies): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (!trusted.length) return peer;
  return clientAddress(peer, req.headers['x-forwarded-for'], trusted)?.toString() ?? peer;
}

/** Whether the socket peer is one of the trusted proxies (their X-Forwarded-* headers count). */
export function fromTrustedProxy(req: IncomingMessage, trusted: TrustedProxies): boolean {
  if (!trusted.length) return false;
  const peer = parseAddress(req.socket.remoteAddress ?? '');
  return peer !== undefined && inRanges(peer, trusted);
}

/** The last value of a forwarded header a proxy may have appended to (`a, b` means b is the proxy's). */
const lastValue = (v: string | string[] | undefined) => {
  const all = (Array.isArray(v) ? v.join(',') : (v ?? '')).split(',').map((s) => s.trim()).filter(Boolean);
  return all.at(-1);
};

/**
 * Behind a trusted proxy, the Host the person asked for is X-Forwarded-Host and the scheme
 * X-Forwarded-Proto; from anyone else those headers are ignored. Rewrites the request's Host so
 * Host routing (workload and gateway addresses) and whatever is forwarded to a workload agree.
 * Returns the scheme the client used.
 */
export function applyForwardedHeaders(req: IncomingMessage, trusted: TrustedProxies, ownScheme: 'http' | 'https'): 'http' | 'https' {
  if (!fromTrustedProxy(req, trusted)) return ownScheme;
  const host = lastValue(req.headers['x-forwarded-host']);
  if (host) req.headers.host = host;
  const proto = lastValue(req.headers['x-forwarded-proto'])?.toLowerCase();
  return proto === 'https' || proto === 'http' ? proto : ownScheme;
}
