import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Calls from inside the platform to a workload's internal address (spec 1 §2.2: `url` is
 * "reachable only from inside the platform"), such as push deliveries (spec 3 §6). Locally the
 * internal and the public address are the same Host-routed listener, so a call made by the daemon
 * itself proves its origin with a per-process secret header. The public route treats such a call
 * as internal traffic (no invoke gate, no per-caller rate limit, as on a private network) and
 * strips the header before the request reaches the workload.
 */
export const INTERNAL_CALL_HEADER = 'x-platform-internal-call';

const secret = Buffer.from(randomBytes(32).toString('base64url'));

/** Headers that mark a request as sent by this daemon process. */
export function internalCallHeaders(): Record<string, string> {
  return { [INTERNAL_CALL_HEADER]: secret.toString() };
}

export function isInternalCall(req: IncomingMessage): boolean {
  const v = req.headers[INTERNAL_CALL_HEADER];
  if (typeof v !== 'string') return false;
  const got = Buffer.from(v);
  return got.length === secret.length && timingSafeEqual(got, secret);
}
