import type { LogLine } from './types.js';

/** `<ts> <instance> <stream>: <message>`, the daemon's text/plain log line (formatLogLine). */
const LIVE_LINE = /^(\d{4}-\d{2}-\d{2}T\S+) (\S+) (stdout|stderr|system): (.*)$/;

/** An instance is named `<revision>-<6 hex>` by the supervisor and the serverless pool. */
export const revisionOf = (instance: string) => instance.replace(/-[0-9a-f]{6}$/, '');

/** A line of the live text stream as a LogLine, or undefined for the daemon's own notes. */
export function parseLiveLine(text: string): LogLine | undefined {
  const m = LIVE_LINE.exec(text);
  if (!m) return undefined;
  const [, ts, instance, stream, message] = m;
  return { ts: ts!, instance: instance!, revision: revisionOf(instance!), stream: stream as LogLine['stream'], message: message! };
}

/**
 * Calls onText for every complete line of a streamed body until it ends (a last line without its
 * newline included). `cancelled` is handed a function that ends the read early.
 */
export async function readTextLines(body: ReadableStream<Uint8Array>, onText: (text: string) => void, cancelled: (cancel: () => void) => void): Promise<void> {
  const reader = body.getReader();
  cancelled(() => void reader.cancel().catch(() => undefined));
  const decoder = new TextDecoder();
  let partial = '';
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (e) {
      // A cancel from our side ends the read like the end of the stream; anything else is a broken stream.
      if ((e as Error).name === 'AbortError') break;
      throw e;
    }
    if (chunk.done) break;
    partial += decoder.decode(chunk.value, { stream: true });
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const p of parts) onText(p);
  }
  partial += decoder.decode();
  if (partial) onText(partial);
}
