import ipaddr from 'ipaddr.js';
import { badRequest } from '../../http/errors.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * Parses a CIDR (or a single address, taken as /32 or /128) into its canonical text; a malformed
 * entry is a 400 naming it. IPv4-mapped IPv6 ranges are kept as written: addresses are unmapped
 * before matching instead (see `clientAddress`).
 */
export function normaliseCidr(entry: string, field = 'ip_allowlist'): string {
  const s = entry.trim();
  try {
    if (s.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(s);
      return `${addr.toNormalizedString()}/${bits}`;
    }
    const addr = ipaddr.parse(s);
    return `${addr.toNormalizedString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    throw badRequest(`${field}: ${JSON.stringify(entry)} is not an IPv4 or IPv6 CIDR`);
  }
}

export function compileRanges(cidrs: string[]): Range[] {
  return cidrs.map((c) => ipaddr.parseCIDR(c) as Range);
}

/** An address in canonical form (IPv4-mapped IPv6 becomes IPv4), or undefined when unparsable. */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.process(text.trim());
  } catch {
    return undefined;
  }
}

export function inRanges(addr: ipaddr.IPv4 | ipaddr.IPv6, ranges: Range[]): boolean {
  return ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net as never, bits));
}

/**
 * The client's address: the socket peer, unless the peer is a trusted proxy, in which case the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy (entries further left are
 * whatever the client chose to send and prove nothing).
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined, trusted: Range[]): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const addr = parseAddress(peer);
  if (!addr || !trusted.length || !inRanges(addr, trusted) || !forwardedFor) return addr;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i]!);
    if (!hop) return addr;
    if (!inRanges(hop, trusted)) return hop;
  }
  return addr;
}
