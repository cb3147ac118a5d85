import { pipeline } from 'node:stream/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import { loadUndici } from '../../lazy/modules.js';
import { ApiError } from '../../http/errors.js';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate', 'host']);

export interface Hop {
  /** Origin the request goes to (one of the daemon's own listeners). */
  origin: string;
  path: string;
  /** Headers set on top of the client's (after dropping), e.g. Host or the project credential. */
  set: Record<string, string>;
  /** Client headers not passed on (the endpoint's own credential). */
  drop: Set<string>;
}

/**
 * The gateway's forwarding client: one keep-alive undici pool per origin (the daemon's main and
 * internal listeners), request and response bodies streamed both ways, a dead target mapped to
 * 502 and one that does not start answering within the timeout to 504 (spec 2 §7 envelope).
 */
export class Forwarder {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly timeoutMs: number) {}

  private pool(origin: string): Pool {
    let p = this.pools.get(origin);
    if (!p) this.pools.set(origin, (p = new (loadUndici().Pool)(origin, { connections: 128, keepAliveTimeout: 4_000, pipelining: 1 })));
    return p;
  }

  async forward(req: IncomingMessage, res: ServerResponse, hop: Hop, forwarded: { for: string; proto: string; host: string }, targetName: string): Promise<void> {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && !hop.drop.has(k)) headers[k] = v;
    const prior = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${forwarded.for}` : forwarded.for;
    headers['x-forwarded-proto'] = forwarded.proto;
    headers['x-forwarded-host'] = forwarded.host;
    Object.assign(headers, hop.set);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    let up: Awaited<ReturnType<Pool['request']>>;
    try {
      up = await this.pool(hop.origin).request({
        method: (req.method ?? 'GET') as 'GET',
        path: hop.path,
        headers,
        body: hasBody ? req : undefined,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'UND_ERR_HEADERS_TIMEOUT') throw new ApiError(504, `target ${targetName} did not answer within ${Math.round(this.timeoutMs / 1000)} s`);
      throw new ApiError(502, `target ${targetName} could not be reached: ${(e as Error).message}`);
    }
    res.statusCode = up.statusCode;
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) res.setHeader(k, v);
    try {
      await pipeline(up.body, res);
    } catch {
      // The target broke off mid-body: the status is already sent, so the client sees a cut response.
      res.destroy();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}
