import type { Readable } from 'node:stream';
import type { LogLine } from '../../api/agents.js';

export type LogListener = (line: LogLine) => void;

/**
 * Where captured lines go to be persisted. Returns false when the store is behind and refuses the
 * line (it is then dropped and counted); `force` lines (system lines, drop notices) are always taken.
 */
export type LogSink = (line: LogLine, force: boolean) => boolean | void;

/** Bounds on what one instance's output may cost the daemon (issue 16 §2). */
export interface CaptureLimits {
  /** Longest line kept, in bytes; the rest of a longer line is dropped and the line marked truncated. */
  maxLineBytes: number;
  /** Live-view ring buffer: newest lines, bounded by count and by characters. */
  keepLines: number;
  keepChars: number;
  /** Per instance, at most this many lines and bytes per window; the rest is dropped and counted. */
  windowMs: number;
  windowLines: number;
  windowBytes: number;
}

export const DEFAULT_CAPTURE_LIMITS: CaptureLimits = {
  maxLineBytes: 16 * 1024,
  keepLines: 2000,
  keepChars: 2 * 1024 * 1024,
  windowMs: 1000,
  windowLines: 1000,
  windowBytes: 1024 * 1024,
};

/** Bytes of one stream handled per event-loop turn before it yields. */
const TURN_BYTES = 256 * 1024;
/** While an instance's lines are being dropped, its streams are read at most TURN_BYTES per this. */
const DROP_PACE_MS = 16;
/** A stream holding more than this unread is never paused (see attach). */
const PAUSED_BUFFER_BYTES = 1024 * 1024;

/** The partial line of one stream: pieces copied out of chunks, never more than the cap. */
interface PendingLine {
  parts: Buffer[];
  size: number;
  /** Set once the line passed the cap: the rest of it up to its newline is dropped. */
  cut: boolean;
}

/**
 * Captures one instance's output: splits stdout and stderr into lines, keeps the newest lines
 * for live logs, tells followers, and hands every line to a sink that persists it. System
 * lines (start, crash, scale to zero) go through the same path so they show in both views.
 *
 * The cost is bounded whatever the workload writes: splitting is linear (each byte is scanned
 * once with Buffer.indexOf, the partial line is never re-split), a line keeps at most
 * `maxLineBytes`, the ring buffer is bounded, and lines over the instance's rate or refused by
 * a store that is behind are dropped before a string is even made, then counted in a system
 * line ("N lines dropped: ...") as journald's "Suppressed N messages" does.
 */
export class LogCapture {
  private readonly ring: Ring;
  private lastMs = 0;
  private lastTs = '';
  private readonly listeners = new Map<LogListener, () => void>();
  private windowStart = 0;
  private windowLines = 0;
  private windowBytes = 0;
  private droppedRate = 0;
  private droppedStore = 0;
  private noticeTimer?: NodeJS.Timeout;
  private readonly limits: CaptureLimits;
  closed = false;

  constructor(
    readonly instance: string,
    readonly revision: string,
    private readonly sink: LogSink,
    limits: Partial<CaptureLimits> = {},
  ) {
    this.limits = { ...DEFAULT_CAPTURE_LIMITS, ...limits };
    this.ring = new Ring(this.limits.keepLines, this.limits.keepChars);
  }

  attach(stream: Readable, name: 'stdout' | 'stderr'): void {
    const partial: PendingLine = { parts: [], size: 0, cut: false };
    // libuv reads up to 32 chunks of 64 KiB per loop turn: past TURN_BYTES the stream pauses
    // until the next turn, so requests waiting on other sockets are served in between. While the
    // instance is over its rate or inside an over-long line (bytes are dropped anyway) the pause
    // is DROP_PACE_MS, which caps what a flood costs the daemon's CPU at TURN_BYTES per pace. The
    // pause only ever waits on a timer, so nothing can deadlock on it; the flooding child's
    // writes wait meanwhile.
    let turnBytes = 0;
    const resume = () => {
      turnBytes = 0;
      stream.resume();
    };
    stream.on('data', (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      this.feed(name, partial, buf);
      turnBytes += buf.length;
      // A source that ignores backpressure (the docker driver's demultiplexed streams) keeps
      // filling the stream while it is paused: past PAUSED_BUFFER_BYTES it is read at full
      // speed again, so pausing never turns into buffering without end.
      if (turnBytes >= TURN_BYTES && !stream.isPaused() && stream.readableLength < PAUSED_BUFFER_BYTES) {
        stream.pause();
        if (this.droppedRate > 0 || partial.cut) setTimeout(resume, DROP_PACE_MS);
        else setImmediate(resume);
      }
    });
    stream.on('end', () => {
      if (partial.size && !partial.cut) this.whole(name, Buffer.concat(partial.parts, partial.size));
      partial.parts = [];
      partial.size = 0;
      partial.cut = false;
    });
  }

  /** Splits one chunk: every byte is looked at once; only the unfinished tail is copied and kept. */
  private feed(name: 'stdout' | 'stderr', p: PendingLine, chunk: Buffer): void {
    const max = this.limits.maxLineBytes;
    let start = 0;
    while (start < chunk.length) {
      if (p.size === 0 && !p.cut && this.overRate(Date.now())) {
        // Over the rate: whole lines are only counted, with no object or string made for them.
        let nl: number;
        while ((nl = chunk.indexOf(10, start)) >= 0) {
          this.droppedRate++;
          start = nl + 1;
        }
        this.scheduleNotice(this.windowStart + this.limits.windowMs - Date.now());
        if (start >= chunk.length) break;
      }
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!p.cut) {
        const take = Math.min(max - p.size, end - start);
        if (nl >= 0 && p.size === 0 && take === end - start) {
          // The common case: a whole line inside one chunk, no copy.
          this.line(name, chunk, start, end);
          start = nl + 1;
          continue;
        }
        if (take > 0) {
          p.parts.push(Buffer.from(chunk.subarray(start, start + take)));
          p.size += take;
        }
        if (take < end - start) {
          // Over the cap: emit what fits now, marked, and drop the rest of the line as it comes.
          p.cut = true;
          this.whole(name, Buffer.concat(p.parts, p.size), true);
          p.parts = [];
          p.size = 0;
        }
      }
      if (nl < 0) break;
      if (!p.cut && p.size) this.whole(name, Buffer.concat(p.parts, p.size));
      p.parts = [];
      p.size = 0;
      p.cut = false;
      start = nl + 1;
    }
  }

  /** Starts a new rate window when the current one is over; true while this one is used up. */
  private overRate(now: number): boolean {
    const l = this.limits;
    if (now - this.windowStart >= l.windowMs) {
      this.windowStart = now;
      this.windowLines = 0;
      this.windowBytes = 0;
      return false;
    }
    return this.windowLines >= l.windowLines || this.windowBytes >= l.windowBytes;
  }

  private whole(stream: 'stdout' | 'stderr', bytes: Buffer, truncated = false): void {
    this.line(stream, bytes, 0, bytes.length, truncated);
  }

  /**
   * One finished line (bytes start..end of buf) from a workload stream: admitted by the
   * instance's budget, else counted before any string or object is made for it.
   */
  private line(stream: 'stdout' | 'stderr', buf: Buffer, start: number, end: number, truncated = false): void {
    const now = Date.now();
    const l = this.limits;
    this.overRate(now);
    const size = end - start;
    if (this.windowLines >= l.windowLines || this.windowBytes + size > l.windowBytes) {
      this.droppedRate++;
      this.scheduleNotice(this.windowStart + l.windowMs - now);
      return;
    }
    if (end > start && buf[end - 1] === 13) end--;
    // A cut line may end inside a UTF-8 sequence: a streaming decode leaves the partial character out.
    let message = truncated ? new TextDecoder().decode(buf.subarray(start, end), { stream: true }) : buf.toString('utf8', start, end);
    if (truncated) message += ` … [truncated: line longer than ${l.maxLineBytes} bytes, the rest of it was dropped]`;
    // The count of earlier drops goes first, offered like any line: while the store refuses it,
    // this line is refused too and the count waits for the timer (no notice per refused line).
    if ((this.droppedRate || this.droppedStore) && !this.notice(false)) {
      this.droppedStore++;
      this.scheduleNotice(250);
      return;
    }
    if (this.emit(stream, message, false)) {
      this.windowLines++;
      this.windowBytes += size;
    } else {
      this.droppedStore++;
      this.scheduleNotice(250);
    }
  }

  /** A system line: always kept (start, ready, crash, stop, drop counts). */
  push(stream: LogLine['stream'], message: string): void {
    if (stream !== 'system') {
      this.whole(stream, Buffer.from(message));
      return;
    }
    if (this.droppedRate || this.droppedStore) this.notice();
    this.emit(stream, message, true);
  }

  private emit(stream: LogLine['stream'], message: string, force: boolean): boolean {
    const now = Date.now();
    if (now !== this.lastMs) {
      this.lastMs = now;
      this.lastTs = new Date(now).toISOString();
    }
    const line: LogLine = { ts: this.lastTs, revision: this.revision, instance: this.instance, stream, message };
    if (this.sink(line, force) === false) return false;
    this.ring.push(line);
    for (const listener of this.listeners.keys()) listener(line);
    return true;
  }

  private scheduleNotice(inMs: number): void {
    if (this.noticeTimer) return;
    this.noticeTimer = setTimeout(() => {
      this.noticeTimer = undefined;
      this.notice();
    }, Math.max(0, inMs));
    this.noticeTimer.unref();
  }

  /** Writes how many lines were dropped since the last notice, and why; false if the store refused it. */
  private notice(force = true): boolean {
    const n = this.droppedRate + this.droppedStore;
    if (!n) return true;
    const l = this.limits;
    const rate = `over the instance's log rate of ${l.windowLines} lines or ${Math.round(l.windowBytes / 1024 / 1024)} MiB per ${l.windowMs / 1000} s`;
    const store = 'while the log store was behind';
    const why = this.droppedRate && this.droppedStore ? `${this.droppedRate} ${rate}, ${this.droppedStore} ${store}` : this.droppedRate ? rate : store;
    if (!this.emit('system', `${n} line${n === 1 ? '' : 's'} dropped from instance ${this.instance} (${why})`, force)) return false;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = undefined;
    this.droppedRate = 0;
    this.droppedStore = 0;
    return true;
  }

  lines(): LogLine[] {
    return this.ring.toArray();
  }

  /** Subscribes to new lines until the instance stops (then `onEnd`); returns the unsubscribe function. */
  follow(listener: LogListener, onEnd: () => void): () => void {
    if (this.closed) {
      onEnd();
      return () => {};
    }
    this.listeners.set(listener, onEnd);
    return () => this.listeners.delete(listener);
  }

  /** Ends every follower (the instance stopped), after a last count of dropped lines. */
  close(): void {
    this.notice();
    this.closed = true;
    for (const end of this.listeners.values()) end();
    this.listeners.clear();
  }
}

/** The newest lines, bounded by count and by characters; O(1) per line. */
class Ring {
  private readonly slots: (LogLine | undefined)[];
  private head = 0;
  private count = 0;
  private chars = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxChars: number,
  ) {
    this.slots = new Array<LogLine | undefined>(maxLines);
  }

  push(line: LogLine): void {
    if (this.count === this.maxLines) this.dropOldest();
    this.slots[(this.head + this.count) % this.maxLines] = line;
    this.count++;
    this.chars += line.message.length;
    while (this.chars > this.maxChars && this.count > 1) this.dropOldest();
  }

  private dropOldest(): void {
    this.chars -= this.slots[this.head]!.message.length;
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.maxLines;
    this.count--;
  }

  toArray(): LogLine[] {
    const out: LogLine[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.slots[(this.head + i) % this.maxLines]!);
    return out;
  }
}

/** Renders a line for the text/plain live view. */
export const formatLogLine = (l: LogLine) => `${l.ts} ${l.instance} ${l.stream}: ${l.message}\n`;
