import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The parsed JSON body, when it is JSON. */
  json?: any;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The server closed the connection (before the wait ended). */
  closed: boolean;
  /** Milliseconds from the first write to the first complete response (or the close). */
  ms: number;
}

/** Splits what the server sent into responses (Content-Length framed, as every answer here is). */
function parseResponses(buf: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) return out;
    const [statusLine, ...lines] = buf.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const len = Number(headers['content-length'] ?? 0);
    if (buf.length < end + 4 + len) return out;
    const body = buf.subarray(end + 4, end + 4 + len).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body, json });
    at = end + 4 + len;
  }
}

/**
 * Writes bytes to the daemon over a plain TCP socket, exactly as given (no client library would
 * send these), and collects the answers until `expect` responses arrived, the server closed the
 * connection, or `waitMs` passed.
 */
export function rawExchange(
  port: number,
  chunks: Array<string | Buffer>,
  opts: { expect?: number; waitMs?: number; gapMs?: number; onSocket?: (s: Socket) => void } = {},
): Promise<RawExchange> {
  const expectN = opts.expect ?? 1;
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    opts.onSocket?.(s);
    let buf = Buffer.alloc(0);
    let started = 0;
    let firstAt = 0;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ responses: parseResponses(buf), closed, ms: (firstAt || Date.now()) - started });
    };
    const timer = setTimeout(() => finish(false), opts.waitMs ?? 5_000);
    s.on('connect', async () => {
      started = Date.now();
      for (const c of chunks) {
        if (s.destroyed) return;
        s.write(c);
        if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
      }
    });
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const n = parseResponses(buf).length;
      if (n >= 1 && !firstAt) firstAt = Date.now();
      if (n >= expectN) finish(false);
    });
    s.on('error', (e) => (done ? undefined : (e as NodeJS.ErrnoException).code === 'ECONNRESET' ? finish(true) : reject(e)));
    s.on('close', () => finish(true));
  });
}

/** The platform's error envelope, with the request id of the X-Request-Id header (spec 1 §7). */
export function isEnvelope(r: RawResponse): boolean {
  return typeof r.json?.error === 'string' && typeof r.json?.request_id === 'string' && r.json.request_id === r.headers['x-request-id'];
}
