import { readFileSync, statSync } from 'node:fs';

/** Bytes of the HS256 session signing key the daemon writes (bootstrap.ts: 32 random bytes). */
const KEY_BYTES = 32;

/**
 * A service's hold on the session signing key (spec 3 §5: "a session key that cannot be
 * loaded by the service gives 503"). The file in the state directory is the source of truth a
 * restarted daemon signs with; when it is missing, unreadable or not a key, the service cannot
 * vouch for the credentials it is shown. Re-read only when the file changes (size or mtime).
 */
export class SessionKeyWatch {
  private seen?: { mtimeMs: number; size: number; problem?: string };

  constructor(private readonly file: string) {}

  /** undefined when the key loads, else why it does not. */
  problem(): string | undefined {
    let st;
    try {
      st = statSync(this.file);
    } catch (e) {
      return `session signing key not loaded: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message} reading ${this.file}`;
    }
    if (this.seen && this.seen.mtimeMs === st.mtimeMs && this.seen.size === st.size) return this.seen.problem;
    let problem: string | undefined;
    try {
      const text = readFileSync(this.file, 'utf8').trim();
      const key = Buffer.from(text, 'base64');
      if (key.length < KEY_BYTES || key.toString('base64') !== text) problem = `session signing key not loaded: ${this.file} does not hold a ${KEY_BYTES}-byte base64 key`;
    } catch (e) {
      problem = `session signing key not loaded: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message} reading ${this.file}`;
    }
    this.seen = { mtimeMs: st.mtimeMs, size: st.size, problem };
    return problem;
  }
}
