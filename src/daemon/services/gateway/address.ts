import type { DaemonConfig } from '../../config.js';
import { originFor } from '../../public-address.js';

/**
 * Addresses of endpoints: `<name>-<short>.<gateway_domain>` or a verified custom hostname. Locally
 * (a `localhost` zone) the daemon's own listener serves them, so the url carries http and its port.
 */
export const sharedHostname = (config: DaemonConfig, name: string, short: string) => `${name}-${short}.${config.gateway.domain}`;

const isLocalZone = (config: DaemonConfig) => config.gateway.domain === 'localhost' || config.gateway.domain.endsWith('.localhost');

/** A server serves its gateway addresses on its public listener, so they carry its public scheme and port. */
export const urlOf = (config: DaemonConfig, hostname: string) => (config.server || isLocalZone(config) ? originFor(config, hostname) : `https://${hostname}`);

/** The CNAME a custom hostname points at (spec 2 §4.5: `<project_short>.<gateway_domain>`). */
export const cnameTarget = (config: DaemonConfig, short: string) => `${short}.${config.gateway.domain}`;

/**
 * The hostname a request asked for, normalised the one way every lookup uses: lowercase, no port,
 * no trailing dot (`A.Example.COM.:8080` and `a.example.com` are the same name).
 */
export function requestHostname(hostHeader: string): string | undefined {
  let h = hostHeader.trim().toLowerCase();
  if (!h || h.startsWith('[')) return undefined;
  const colon = h.lastIndexOf(':');
  if (colon !== -1) {
    if (!/^\d{1,5}$/.test(h.slice(colon + 1))) return undefined;
    h = h.slice(0, colon);
  }
  if (h.endsWith('.')) h = h.slice(0, -1);
  return /^[a-z0-9.-]+$/.test(h) && !h.includes('..') ? h : undefined;
}

/** `<name>-<short>` in front of the shared zone; the short is the last hyphen-separated part. */
export function parseSharedHostname(config: DaemonConfig, hostname: string): { name: string; short: string } | undefined {
  const suffix = `.${config.gateway.domain}`;
  if (!hostname.endsWith(suffix)) return undefined;
  const m = /^([a-z](?:[a-z0-9-]{0,38}[a-z0-9])?)-([a-z][a-z0-9]{5})$/.exec(hostname.slice(0, -suffix.length));
  return m ? { name: m[1]!, short: m[2]! } : undefined;
}
