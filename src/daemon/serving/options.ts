import ipaddr from 'ipaddr.js';
import type { ServerModeConfig } from '../config.js';

/** A setting of `platform server start` that cannot work; the CLI shows it as a usage error. */
export class ServerOptionError extends Error {}

export interface ServerOptionsInput {
  listen: string;
  tlsCert?: string;
  tlsKey?: string;
  publicUrl?: string;
  behindProxy?: string;
  shutdownTimeoutSeconds: number;
}

/** `HOST:PORT`, `[V6]:PORT` or `:PORT` (every interface). */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(listen.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new ServerOptionError(`--listen ${JSON.stringify(listen)}: expected HOST:PORT, such as 0.0.0.0:8443, 127.0.0.1:7070 or [::]:8443`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/** Whether only this machine can reach a listener on the host: a loopback address or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  try {
    return ipaddr.process(host).range() === 'loopback';
  } catch {
    return false;
  }
}

/** `--behind-proxy CIDR[,CIDR]`: each a CIDR or a single address, normalised. */
export function parseProxies(list: string | undefined): string[] {
  const out: string[] = [];
  for (const entry of (list ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    try {
      const [addr, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : (() => {
        const a = ipaddr.parse(entry);
        return [a, a.kind() === 'ipv4' ? 32 : 128] as const;
      })();
      out.push(`${addr.toNormalizedString()}/${bits}`);
    } catch {
      throw new ServerOptionError(`--behind-proxy: ${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR`);
    }
  }
  return out;
}

/**
 * Turns the flags of `platform server start` into the server settings, refusing what would put
 * credentials on the network in clear: a listener other than loopback needs TLS, or a named
 * reverse proxy that terminates it (docs/decisions/server.md).
 */
export function serverModeConfig(input: ServerOptionsInput): ServerModeConfig {
  const { host, port } = parseListen(input.listen);
  if (Boolean(input.tlsCert) !== Boolean(input.tlsKey)) throw new ServerOptionError('--tls-cert and --tls-key go together: give both files, or neither');
  const tls = input.tlsCert && input.tlsKey ? { certFile: input.tlsCert, keyFile: input.tlsKey } : undefined;
  const behindProxy = parseProxies(input.behindProxy);
  if (!tls && !behindProxy.length && !isLoopbackHost(host)) {
    throw new ServerOptionError(
      `refusing to listen on ${host}:${port} without TLS: passwords and tokens would cross the network in clear. ` +
        'Give --tls-cert FILE --tls-key FILE, or name the reverse proxy that terminates TLS in front of this server with --behind-proxy CIDR, or listen on 127.0.0.1',
    );
  }
  let publicUrl = '';
  if (input.publicUrl) {
    let u: URL;
    try {
      u = new URL(input.publicUrl);
    } catch {
      throw new ServerOptionError(`--public-url ${JSON.stringify(input.publicUrl)} is not a URL`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ServerOptionError('--public-url must be an http or https URL');
    publicUrl = u.origin;
  }
  if (!(input.shutdownTimeoutSeconds >= 0)) throw new ServerOptionError('--shutdown-timeout must be a number of seconds, 0 or more');
  return { listenHost: host, listenPort: port, ...(tls ? { tls } : {}), publicUrl, behindProxy, shutdownTimeoutMs: input.shutdownTimeoutSeconds * 1000 };
}
