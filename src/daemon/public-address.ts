import { hostname } from 'node:os';
import { loopbackBaseUrl, type DaemonConfig, type ServerModeConfig } from './config.js';

/** Listen addresses that mean every interface; a link needs a name instead. */
const WILDCARD = new Set(['0.0.0.0', '::', '']);

/** The public listener's own address: its scheme, host (the machine's name for a wildcard) and port. */
export function listenUrlOf(s: ServerModeConfig): string {
  const host = WILDCARD.has(s.listenHost) ? hostname() : s.listenHost;
  return `${s.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${s.listenPort}`;
}

/**
 * The address people use: --public-url, else the listen address. Computed on each use: with
 * port 0 the real port is known only once listening, and areas may hand out addresses before.
 */
export const publicUrlOf = (s: ServerModeConfig) => s.publicUrl || listenUrlOf(s);

/**
 * The daemon's own base URL, for addresses handed out in credentials and links: a server's
 * public URL, else the loopback listener. Never the request's Host header: a caller could
 * otherwise have a credential point elsewhere.
 */
export const ownBaseUrl = (c: Pick<DaemonConfig, 'host' | 'port' | 'server'>) => (c.server ? publicUrlOf(c.server) : loopbackBaseUrl(c));

/**
 * Public addresses of workloads, `<label>.<apps domain>`. The local daemon serves them itself in
 * plain http on its port; a server (docs/decisions/server.md) hands out the scheme and port of its
 * public URL, since that is what a person in front of the proxy or the TLS listener reaches.
 */
export function workloadUrl(config: Pick<DaemonConfig, 'appsDomain' | 'port' | 'server'>, label: string): string {
  return originFor(config, `${label}.${config.appsDomain}`);
}

/** `http://<hostname>:<port>` of the local daemon, or the hostname with a server's public scheme and port. */
export function originFor(config: Pick<DaemonConfig, 'port' | 'server'>, hostname: string): string {
  if (!config.server) return `http://${hostname}:${config.port}`;
  const u = new URL(publicUrlOf(config.server));
  return `${u.protocol}//${hostname}${u.port ? `:${u.port}` : ''}`;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const patterns = new Map<string, RegExp>();

/**
 * The label of a Host header under the apps domain (`fn-abc123` of `fn-abc123.apps.localhost:7070`),
 * whatever the port; undefined for any other host.
 */
export function appsLabel(host: string, appsDomain: string): string | undefined {
  let re = patterns.get(appsDomain);
  if (!re) patterns.set(appsDomain, (re = new RegExp(`^([a-z0-9-]+)\\.${escapeRegExp(appsDomain)}\\.?(?::\\d+)?$`, 'i')));
  return re.exec(host.trim())?.[1]?.toLowerCase();
}
