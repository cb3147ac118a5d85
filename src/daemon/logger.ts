/** Minimal structured logger: one JSON line per event on stderr (the daemon's log file). */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    write(JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields }) + '\n');
  return { info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
