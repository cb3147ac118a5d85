import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { egressVerdict } from './egress.js';
import { loadUndici } from './lazy/modules.js';

/**
 * A fetch for URLs a user names that the daemon itself fetches (a gateway's jwks_uri): the name is
 * resolved once, every address is checked against the egress policy (no loopback, unspecified or
 * link-local address, so a user cannot point the daemon at the host's own services or the cloud
 * metadata address), and the connection goes to the checked address only, so a second answer of
 * the name server (DNS rebinding) cannot swap it. PLATFORM_EGRESS_ALLOW names the exceptions.
 */
export function guardedFetch(allow: ReadonlySet<string>): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const addresses = await lookup(host, { all: true });
    for (const a of addresses) {
      const v = egressVerdict(host, a.address, port, { platformPorts: [], allow });
      if (!v.ok) throw new Error(`refused to fetch ${url.origin}: ${v.reason}`);
    }
    const pinned: LookupFunction = (_name, opts, cb) => {
      if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    };
    const { Agent, fetch: undiciFetch } = loadUndici();
    const dispatcher = new Agent({ connect: { lookup: pinned } });
    try {
      const res = await undiciFetch(url, { ...(init as object), dispatcher });
      // The body is read by the caller after this returns: keep the agent until then.
      const body = await res.arrayBuffer();
      return new Response(body, { status: res.status, statusText: res.statusText, headers: Object.fromEntries(res.headers) });
    } finally {
      void dispatcher.close();
    }
  };
}
