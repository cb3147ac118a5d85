/** A build's kept output: the last 1 MiB of characters (a failing build's cause is at its end). */
export const BUILD_LOG_KEEP_CHARS = 1024 * 1024;

type Follower = { chunk: (text: string) => void; end: () => void };

/**
 * One build's output while it runs: a bounded tail (older text is dropped and counted, never
 * buffered without end) and the followers that stream it live (`platform deploy`, `logs --build`).
 */
export class BuildLog {
  private parts: string[] = [];
  private length = 0;
  private dropped = 0;
  private readonly followers = new Set<Follower>();
  ended = false;

  constructor(private readonly keep = BUILD_LOG_KEEP_CHARS) {}

  append(chunk: string): void {
    if (!chunk || this.ended) return;
    this.parts.push(chunk);
    this.length += chunk.length;
    if (this.length > this.keep * 2) this.compact();
    for (const f of this.followers) f.chunk(chunk);
  }

  /** The kept text, with a first line saying how much was dropped before it. */
  text(): string {
    this.compact();
    const body = this.parts.join('');
    return this.dropped ? `[${this.dropped} earlier characters of build output were dropped: the last ${this.keep} are kept]\n${body}` : body;
  }

  /** Streams every later chunk until end(); returns the unsubscribe function. */
  follow(chunk: (text: string) => void, end: () => void): () => void {
    if (this.ended) {
      end();
      return () => {};
    }
    const f = { chunk, end };
    this.followers.add(f);
    return () => this.followers.delete(f);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const f of this.followers) f.end();
    this.followers.clear();
  }

  /** Joins the parts and cuts the head: amortised linear, since it runs once per `keep` characters. */
  private compact(): void {
    if (this.parts.length <= 1 && this.length <= this.keep) return;
    let body = this.parts.join('');
    if (body.length > this.keep) {
      this.dropped += body.length - this.keep;
      body = body.slice(body.length - this.keep);
    }
    this.parts = [body];
    this.length = body.length;
  }
}
