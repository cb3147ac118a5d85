import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { loadUndici } from '../../../lazy/modules.js';
import { ApiError } from '../../../http/errors.js';
import { INTERNAL_CALL_HEADER } from '../../../internal-call.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the daemon's own proof header never reach the service. */
const DROPPED_REQUEST = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection', 'proxy-authorization', INTERNAL_CALL_HEADER]);
const DROPPED_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate']);

export interface ForwardTarget {
  /** The path the service sees (the internal form's prefix already stripped). */
  path: string;
  /** The stripped prefix, sent as X-Forwarded-Prefix. */
  prefix?: string;
  timeoutSeconds: number;
  /** For messages: `service <name> (revision <rev>)`. */
  label: string;
}

/**
 * Forwards one request to an instance and streams the answer back, both ways without buffering,
 * over the instance's keep-alive pool: the shared one with the instance's `http://127.0.0.1:<port>`
 * origin, or the instance's own over its door.sock. The revision's timeout_seconds bounds the wait for the
 * answer and every gap in its body: no answer in time is a 504, an instance that refuses or drops
 * the connection before answering a 502, both in the error envelope; a failure after the status
 * was sent can only cut the response.
 */
export async function forward(dispatcher: Dispatcher, origin: string, req: IncomingMessage, res: ServerResponse, ip: string, t: ForwardTarget): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED_REQUEST.has(k)) headers[k] = v;
  const prior = req.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${ip}` : ip;
  headers['x-forwarded-proto'] = 'http';
  if (req.headers.host) headers['x-forwarded-host'] = req.headers.host;
  if (t.prefix) headers['x-forwarded-prefix'] = t.prefix;
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  const ms = t.timeoutSeconds * 1000;
  let up: Dispatcher.ResponseData;
  try {
    // undici's own timers bound the exchange (no timer or abort signal of ours per request):
    // the status line within timeout_seconds, then no gap longer than that in the body.
    up = await dispatcher.request({
      origin,
      path: t.path,
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers,
      body: hasBody ? req : undefined,
      headersTimeout: ms,
      bodyTimeout: ms,
    });
  } catch (e) {
    throw failure(t, e);
  }
  res.statusCode = up.statusCode;
  for (const k in up.headers) {
    const v = up.headers[k];
    if (v !== undefined && !DROPPED_RESPONSE.has(k)) res.setHeader(k, v);
  }
  try {
    // A plain loop: stream.pipeline costs an AbortController (and its DOMException) per request.
    for await (const c of up.body) {
      if (res.destroyed) break;
      if (!res.write(c)) await drained(res);
    }
    if (res.destroyed) up.body.destroy();
    else res.end();
  } catch {
    // The status is sent (or the client left): all that is left is to cut the response.
    up.body.destroy();
    res.destroy();
  }
}

/** Resolves when the response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * A 502 before any answer; `refused`: the connection itself was refused (or the door's socket is
 * gone), so nothing reached the service.
 */
export class UpstreamFailure extends ApiError {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(502, message);
  }
}

function failure(t: ForwardTarget, e: unknown): ApiError {
  const { HeadersTimeoutError, BodyTimeoutError } = loadUndici().errors;
  if (e instanceof HeadersTimeoutError || e instanceof BodyTimeoutError) return new ApiError(504, `${t.label} did not answer within ${t.timeoutSeconds} s (timeout_seconds)`);
  const code = (e as { code?: string })?.code;
  return new UpstreamFailure(`${t.label} failed to answer: ${(e as Error)?.message ?? String(e)}`, code === 'ECONNREFUSED' || code === 'ENOENT');
}
