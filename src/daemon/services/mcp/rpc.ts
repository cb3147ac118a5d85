import { loadUndici, request } from '../../lazy/modules.js';
import { ApiError } from '../../http/errors.js';

/** The Accept header the Streamable HTTP transport sends: both, so the instance may answer either. */
export const MCP_ACCEPT = 'application/json, text/event-stream';

/**
 * One JSON-RPC call to an instance on behalf of the daemon (deploy verification, a member's
 * tools:call). The answer may be JSON or one SSE `message` event; either way its JSON-RPC
 * message is returned. Timeouts are 504, anything else that keeps an answer from coming 502.
 */
export async function callInstance(
  port: number,
  headers: Record<string, string>,
  bearer: string,
  message: { method: string; params?: unknown },
  timeoutSeconds: number,
  what: string,
): Promise<{ result?: any; error?: { code: number; message: string } }> {
  let up;
  try {
    up = await request(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, authorization: `Bearer ${bearer}`, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
      headersTimeout: timeoutSeconds * 1000,
      bodyTimeout: timeoutSeconds * 1000,
    });
  } catch (e) {
    throw upstreamError(e, what, timeoutSeconds);
  }
  let text: string;
  try {
    text = await up.body.text();
  } catch (e) {
    throw upstreamError(e, what, timeoutSeconds);
  }
  if (up.statusCode !== 200) throw new ApiError(502, `${what} answered ${up.statusCode}: ${text.slice(0, 500)}`);
  const type = String(up.headers['content-type'] ?? '');
  const json = type.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('')
    : text;
  try {
    return JSON.parse(json) as { result?: unknown; error?: { code: number; message: string } };
  } catch {
    throw new ApiError(502, `${what} answered with a body that is not JSON-RPC: ${text.slice(0, 200)}`);
  }
}

export function upstreamError(e: unknown, what: string, seconds: number): ApiError {
  if (e instanceof ApiError) return e;
  const { HeadersTimeoutError, BodyTimeoutError } = loadUndici().errors;
  if (e instanceof HeadersTimeoutError || e instanceof BodyTimeoutError || (e as Error).name === 'TimeoutError') {
    return new ApiError(504, `${what} did not answer within ${seconds} s (the MCP request timeout)`);
  }
  return new ApiError(502, `${what} failed to answer: ${(e as Error).message}`);
}
