/**
 * An expected failure the user can act on: the message says what went wrong, `next` what to do.
 * Commands never call process.exit; the base command maps these to exit codes.
 */
export class AbortError extends Error {
  constructor(
    message: string,
    readonly next?: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** A non-2xx answer from the API, carrying the envelope's message and request id. */
export class ApiCallError extends AbortError {
  constructor(
    readonly status: number,
    message: string,
    readonly requestId?: string,
    readonly body?: unknown,
    next?: string,
  ) {
    super(message, next, 1);
  }
}

/** Wrong flags or arguments: exit code 2, like oclif's own parse errors. */
export class UsageError extends AbortError {
  constructor(message: string, next?: string) {
    super(message, next, 2);
  }
}
