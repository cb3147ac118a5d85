import { AbortError } from './errors.js';

/**
 * How long the CLI waits for the platform to start answering a request (its response headers),
 * so a stopped or wedged daemon fails the command instead of hanging it. 60 s by default, the
 * AWS CLI's read timeout; `--timeout SECONDS` or PLATFORM_TIMEOUT changes it. Only the wait for
 * the first answer is bounded: a followed stream (logs --follow) may stay quiet for as long as it
 * likes once it has answered, and long waits (invoke, backups) carry their own deadline.
 */
export const DEFAULT_ANSWER_TIMEOUT_SECONDS = 60;

let chosen: number | undefined;

/** Set once per command from the global --timeout flag (which already falls back to PLATFORM_TIMEOUT). */
export function setAnswerTimeout(seconds: number | undefined): void {
  chosen = seconds;
}

export function answerTimeoutSeconds(): number {
  if (chosen !== undefined) return chosen;
  const env = Number(process.env.PLATFORM_TIMEOUT);
  return Number.isFinite(env) && env > 0 ? env : DEFAULT_ANSWER_TIMEOUT_SECONDS;
}

/**
 * Uploads cannot be answered before they are sent: their wait grows by a second per MB, a 1 MB/s
 * link, so a large archive over a slow line is not mistaken for a silent server.
 */
export function answerTimeoutFor(body: unknown): number {
  return answerTimeoutSeconds() + Math.ceil(bodyBytes(body) / 1_000_000);
}

function bodyBytes(body: unknown): number {
  if (body === undefined || body === null) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return body.byteLength;
  if (body instanceof Blob) return body.size;
  if (body instanceof FormData) {
    let n = 0;
    for (const [, v] of body) n += typeof v === 'string' ? Buffer.byteLength(v) : v.size;
    return n;
  }
  return 0;
}

/** The failure a person reads when the platform accepted the connection but never answered. */
export function noAnswer(baseUrl: string, seconds: number): AbortError {
  const local = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(baseUrl);
  return new AbortError(
    `the platform at ${baseUrl} did not answer within ${seconds} s; is it stopped?`,
    local ? 'try `platform daemon status`, or raise --timeout' : 'check the server (`platform context list`), or raise --timeout',
  );
}
