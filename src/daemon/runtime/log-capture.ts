import type { Readable } from 'node:stream';
import type { LogLine } from '../../api/agents.js';

export type LogListener = (line: LogLine) => void;

/**
 * Captures one instance's output: splits stdout and stderr into lines, keeps the newest lines
 * for live logs, tells followers, and hands every line to a sink that persists it. System
 * lines (start, crash, scale to zero) go through the same path so they show in both views.
 */
export class LogCapture {
  private readonly buffer: LogLine[] = [];
  private readonly listeners = new Map<LogListener, () => void>();
  closed = false;

  constructor(
    readonly instance: string,
    readonly revision: string,
    private readonly sink: (line: LogLine) => void,
    private readonly keep = 2000,
  ) {}

  attach(stream: Readable, name: 'stdout' | 'stderr'): void {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const p of parts) this.push(name, p.replace(/\r$/, ''));
    });
    stream.on('end', () => {
      if (rest) this.push(name, rest);
      rest = '';
    });
  }

  push(stream: LogLine['stream'], message: string): void {
    const line: LogLine = { ts: new Date().toISOString(), revision: this.revision, instance: this.instance, stream, message };
    this.buffer.push(line);
    if (this.buffer.length > this.keep) this.buffer.shift();
    this.sink(line);
    for (const l of this.listeners.keys()) l(line);
  }

  lines(): LogLine[] {
    return [...this.buffer];
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

  /** Ends every follower (the instance stopped). */
  close(): void {
    this.closed = true;
    for (const end of this.listeners.values()) end();
    this.listeners.clear();
  }
}

/** Renders a line for the text/plain live view. */
export const formatLogLine = (l: LogLine) => `${l.ts} ${l.instance} ${l.stream}: ${l.message}\n`;
