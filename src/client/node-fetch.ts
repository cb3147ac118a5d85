import type { Agent, IncomingMessage } from 'node:http';

/**
 * The CLI's HTTP client: a fetch over node:http and node:https. The global fetch costs every
 * command ~30 ms to load its undici and, once a connection was used, ~85 ms at exit before the
 * process ends; node:http loads in a few ms and its idle kept-alive sockets do not hold the
 * process (bench/cli-start.ts measures both). It has no 300 s header or body timeout either, so
 * long invokes and follows are bounded by the caller's signal alone. Answers are a small
 * Response of what the CLI reads (status, headers.get, json, text, arrayBuffer, body).
 */
const agents = new Map<string, Agent>();

async function agentFor(url: URL, ca: string | undefined): Promise<{ request: typeof import('node:http').request; agent: Agent }> {
  if (url.protocol === 'http:') {
    const http = await import('node:http');
    let agent = agents.get('http');
    if (!agent) agents.set('http', (agent = new http.Agent({ keepAlive: true })));
    return { request: http.request, agent };
  }
  const [https, tls] = await Promise.all([import('node:https'), import('node:tls')]);
  const key = `https|${ca ?? ''}`;
  let agent = agents.get(key);
  if (!agent) {
    // A context's own CA is trusted besides the system's authorities, as NODE_EXTRA_CA_CERTS would do.
    agent = new https.Agent({ keepAlive: true, ...(ca ? { ca: [...tls.rootCertificates, ca] } : {}) });
    agents.set(key, agent);
  }
  return { request: https.request as unknown as typeof import('node:http').request, agent };
}

class AnswerHeaders {
  constructor(private readonly raw: IncomingMessage['headers']) {}
  get(name: string): string | null {
    const v = this.raw[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  }
  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }
}

class NodeResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: AnswerHeaders;
  bodyUsed = false;
  private web: ReadableStream<Uint8Array> | null | undefined;

  constructor(
    private readonly message: IncomingMessage,
    private readonly empty: boolean,
    private readonly toWeb: (m: IncomingMessage) => ReadableStream<Uint8Array>,
  ) {
    this.status = message.statusCode ?? 502;
    this.statusText = message.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new AnswerHeaders(message.headers);
    if (empty) message.resume();
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.web === undefined) this.web = this.empty ? null : this.toWeb(this.message);
    return this.web;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = await this.bytes();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return (await this.bytes()).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  private async bytes(): Promise<Buffer> {
    if (this.bodyUsed || this.web) throw new TypeError('the body of this answer was already read');
    this.bodyUsed = true;
    if (this.empty) return Buffer.alloc(0);
    const chunks: Buffer[] = [];
    for await (const c of this.message) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }
}

export async function nodeFetch(url: URL, init: RequestInit, ca?: string): Promise<Response> {
  const [{ request, agent }, { Readable }] = await Promise.all([agentFor(url, ca), import('node:stream')]);
  const headers = { ...(init.headers as Record<string, string> | undefined) };
  let body = init.body ?? undefined;
  // Not `instanceof FormData`: touching that global loads the undici this module avoids.
  if (Object.prototype.toString.call(body) === '[object FormData]') {
    // Encoded as the global fetch would: streamed, with its multipart boundary (deploys only).
    const encoded = new Response(body as FormData);
    headers['content-type'] = encoded.headers.get('content-type')!;
    body = encoded.body ?? undefined;
  }
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const method = init.method ?? 'GET';
  const toWeb = (m: IncomingMessage) => Readable.toWeb(m) as unknown as ReadableStream<Uint8Array>;
  return new Promise<Response>((resolve, reject) => {
    let answer: IncomingMessage | undefined;
    const req = request(url, { method, headers, agent }, (res) => {
      answer = res;
      const empty = res.statusCode === 204 || res.statusCode === 304 || method === 'HEAD';
      resolve(new NodeResponse(res, empty, toWeb) as unknown as Response);
    });
    req.on('error', reject);
    // The signal bounds the whole exchange: before the answer (rejects) and while its body streams (errors the body).
    const abort = () => {
      const reason = signal!.reason instanceof Error ? signal!.reason : new Error('aborted');
      answer?.destroy(reason);
      req.destroy(reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
    req.on('close', () => signal?.removeEventListener('abort', abort));
    if (body === undefined || body === null) req.end();
    else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
    else if (body instanceof ArrayBuffer) req.end(Buffer.from(body));
    else if (body instanceof ReadableStream) Readable.fromWeb(body as import('node:stream/web').ReadableStream).on('error', (e) => req.destroy(e)).pipe(req);
    else {
      req.destroy();
      reject(new TypeError(`a request body of type ${Object.prototype.toString.call(body)} is not supported`));
    }
  });
}
