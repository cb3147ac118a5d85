import { isIP } from 'node:net';

/**
 * Where an isolated instance may connect through the bridge (docs/decisions/serverless.md,
 * Isolation). Pure: the bridge resolves names and asks once per resolved address.
 */
export interface EgressPolicy {
  /** The daemon's main and internal listeners (on 127.0.0.1). */
  platformPorts: readonly number[];
  /** PLATFORM_EGRESS_ALLOW: `host:port` exceptions, as written (lower case). */
  allow: ReadonlySet<string>;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

const OK: Verdict = { ok: true };

/** `PLATFORM_EGRESS_ALLOW=host:port,[::1]:port`: lower case, brackets of IPv6 literals dropped. */
export function parseEgressAllow(value: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const raw of (value ?? '').split(',')) {
    const m = /^\s*(?:\[([^\]]+)\]|([^\s:]+)):(\d{1,5})\s*$/.exec(raw);
    if (m) out.add(`${(m[1] ?? m[2])!.toLowerCase()}:${Number(m[3])}`);
  }
  return out;
}

/**
 * The verdict for connecting to `address:port`, `address` an IP literal (a resolved name), `asked`
 * the name the door asked for. The daemon's own ports on loopback and the operator's exceptions
 * pass; every other loopback, unspecified and link-local address (the cloud metadata service
 * among them) is refused: those are the host's own services, never the internet.
 */
export function egressVerdict(asked: string, address: string, port: number, p: EgressPolicy): Verdict {
  const name = asked.toLowerCase();
  if (p.allow.has(`${name}:${port}`) || p.allow.has(`${address.toLowerCase()}:${port}`)) return OK;
  const kind = addressKind(address);
  if (kind === 'loopback') {
    return p.platformPorts.includes(port) ? OK : { ok: false, reason: `${asked}:${port} is a loopback address of the host, not the platform's API` };
  }
  if (kind === 'unspecified') return { ok: false, reason: `${asked}:${port} is an unspecified address` };
  if (kind === 'link-local') return { ok: false, reason: `${asked}:${port} is a link-local address (the cloud metadata service lives there)` };
  if (kind === 'invalid') return { ok: false, reason: `${asked} is not an address` };
  return OK;
}

type Kind = 'loopback' | 'unspecified' | 'link-local' | 'public' | 'invalid';

export function addressKind(address: string): Kind {
  const v = isIP(address);
  if (v === 4) return v4Kind(address);
  if (v !== 6) return 'invalid';
  const a = address.toLowerCase();
  // IPv4-mapped and -compatible forms are the IPv4 address they carry.
  const mapped = /^(?:0{0,4}:){0,5}(?:ffff:)?((?:\d{1,3}\.){3}\d{1,3})$/.exec(a.replace(/^::/, '0:'));
  if (mapped && a.includes('.')) return v4Kind(mapped[1]!);
  const words = expand6(a);
  if (!words) return 'invalid';
  if (words.every((w) => w === 0)) return 'unspecified';
  if (words.slice(0, 7).every((w) => w === 0) && words[7] === 1) return 'loopback';
  if ((words[0]! & 0xffc0) === 0xfe80) return 'link-local';
  // ::ffff:7f00:1 written in hex words is 127.0.0.1 too.
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return v4Kind(`${words[6]! >> 8}.${words[6]! & 255}.${words[7]! >> 8}.${words[7]! & 255}`);
  // AWS's IPv6 metadata address.
  if (a === 'fd00:ec2::254') return 'link-local';
  return 'public';
}

function v4Kind(a: string): Kind {
  const o = a.split('.').map(Number);
  if (o.length !== 4 || o.some((n) => !(n >= 0 && n <= 255))) return 'invalid';
  if (o[0] === 127) return 'loopback';
  if (o[0] === 0) return 'unspecified';
  if (o[0] === 169 && o[1] === 254) return 'link-local';
  return 'public';
}

function expand6(a: string): number[] | undefined {
  const [head, tail, extra] = a.split('::');
  if (extra !== undefined) return undefined;
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const words = [...h, ...Array(Math.max(0, fill)).fill('0'), ...t].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => w >= 0 && w <= 0xffff) ? words : undefined;
}
