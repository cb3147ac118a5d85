/**
 * Errors meaning the database cannot be used right now (locked by another process, closed, the
 * disk failing) rather than a bug in a query: the API answers 503 for these, not 500.
 */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CORRUPT|CANTOPEN|NOTADB|FULL|READONLY|PROTOCOL|NOMEM)/;

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (err.name === 'SqliteError' && typeof code === 'string') return UNAVAILABLE.test(code);
  // better-sqlite3 throws a TypeError once the handle is closed.
  return err instanceof TypeError && /database connection is not open/i.test(err.message);
}

export function describeDatabaseError(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'the connection is closed';
}
