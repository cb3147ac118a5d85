import { request } from 'undici';
import type { PushRequest } from './cloudevents.js';
import type { PushTarget } from './push-url.js';

/** Spec 3 §6 and §8: response bodies are read up to 64 KiB. */
export const PUSH_BODY_READ_LIMIT = 64 * 1024;

export interface PushOutcome {
  ok: boolean;
  status?: number;
  /** One line for logs and the dead-letter record. */
  error?: string;
}

/**
 * POSTs one delivery. Any 2xx acknowledges; redirects are never followed (undici's request does
 * not follow them, and a 3xx counts as a failure); a response slower than the deadline is a
 * failure; at most 64 KiB of the response body is read.
 */
export async function sendPush(
  target: PushTarget,
  req: PushRequest,
  timeoutMs: number,
  stop: AbortSignal,
): Promise<PushOutcome> {
  // One timer per delivery: the deadline covers the whole exchange, headers and the body read.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const onStop = () => deadline.abort();
  stop.addEventListener('abort', onStop, { once: true });
  const signal = deadline.signal;
  try {
    const res = await request(target.url, {
      method: 'POST',
      headers: { ...req.headers, ...target.headers, ...(target.host ? { host: target.host } : {}) },
      body: req.body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const snippet = await readCapped(res.body, PUSH_BODY_READ_LIMIT);
    const status = res.statusCode;
    if (status >= 200 && status < 300) return { ok: true, status };
    if (status >= 300 && status < 400) {
      return { ok: false, status, error: `redirect refused: ${status} to ${String(res.headers.location ?? '(no location)')}` };
    }
    return { ok: false, status, error: `status ${status}${snippet ? `: ${oneLine(snippet)}` : ''}` };
  } catch (e) {
    if (stop.aborted) return { ok: false, error: 'delivery interrupted: broker stopping' };
    if (signal.aborted) return { ok: false, error: `no response within the ${timeoutMs} ms deadline` };
    const err = e as Error & { cause?: Error; code?: string };
    if (err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT') return { ok: false, error: `no response within the ${timeoutMs} ms deadline` };
    return { ok: false, error: `request failed: ${err.code ?? ''} ${err.cause?.message ?? err.message}`.replace(/\s+/g, ' ').trim() };
  } finally {
    clearTimeout(timer);
    stop.removeEventListener('abort', onStop);
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 200);
