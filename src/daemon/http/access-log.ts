/**
 * One line per request in server mode (docs/decisions/server.md, Access log): who (a principal
 * key, never a credential), what (the route template, never the raw path, which may carry names
 * or tokens), how it ended and from where (the real client address).
 */
export interface AccessEntry {
  time: string;
  request_id: string;
  /** `user:<id>`, `service_account:<key id>`, `workload:<key id>`; null when anonymous. */
  principal: string | null;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  client: string;
  scheme: 'http' | 'https';
}

export type AccessLog = (entry: AccessEntry) => void;

/** Writes each entry as one JSON line (stdout in server mode, so it stays apart from the daemon's log on stderr). */
export const jsonLines =
  (write: (line: string) => void): AccessLog =>
  (entry) =>
    write(JSON.stringify(entry) + '\n');
