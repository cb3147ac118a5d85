/** A failure the caller can act on; the error middleware renders it as the spec's envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Extra fields placed beside `error` (for example per-row results of a partial failure). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new ApiError(400, message, {}, extra);
export const unauthorized = (message: string) => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message = 'not found') => new ApiError(404, message);
export const conflict = (message: string, extra?: Record<string, unknown>) => new ApiError(409, message, {}, extra);
export const gone = (message: string) => new ApiError(410, message);
export const tooLarge = (message: string) => new ApiError(413, message);
export const unavailable = (message: string) => new ApiError(503, message);
export const tooMany = (message: string, retryAfterSeconds: number) =>
  new ApiError(429, message, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

/** Throws an ApiError when the condition is false; keeps rule checks to one line. */
export function assert(cond: unknown, err: () => ApiError): asserts cond {
  if (!cond) throw err();
}

/** The spec's message for a management call without a usable credential (spec 1 §5). */
export const MANAGEMENT_AUTH_REQUIRED =
  'this is a management endpoint and requires authentication: sign in via POST /v1/auth/login and send the token as Authorization: Bearer <token>';
