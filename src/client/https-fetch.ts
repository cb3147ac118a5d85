import type { Agent } from 'node:https';

/**
 * A fetch over node:https for a context whose server is signed by its own CA (`--ca-cert`).
 * The global fetch takes no CA on Node 20 and the undici package costs ~105 ms to load, which
 * every command against such a context paid at start (bench/remote.ts); node:https loads in
 * ~10 ms. Long waits (invoke, build follows) still go through undici, whose timeouts they need.
 * One kept-alive agent per CA: a command's requests share their connection, and idle sockets do
 * not hold the process open.
 */
const agents = new Map<string, Agent>();

export async function httpsFetch(url: URL, init: RequestInit, ca: string): Promise<Response> {
  const [https, tls, { Readable }] = await Promise.all([import('node:https'), import('node:tls'), import('node:stream')]);
  let agent = agents.get(ca);
  if (!agent) {
    // Trusted besides the system's authorities, as NODE_EXTRA_CA_CERTS would do.
    agent = new https.Agent({ keepAlive: true, ca: [...tls.rootCertificates, ca] });
    agents.set(ca, agent);
  }
  const headers = { ...(init.headers as Record<string, string> | undefined) };
  let body = init.body ?? undefined;
  if (body instanceof FormData) {
    // Encoded as the global fetch would: streamed, with its multipart boundary.
    const encoded = new Response(body);
    headers['content-type'] = encoded.headers.get('content-type')!;
    body = encoded.body ?? undefined;
  }
  return new Promise<Response>((resolve, reject) => {
    const req = https.request(url, { method: init.method ?? 'GET', headers, agent }, (res) => {
      const answer = new Headers();
      for (const [k, v] of Object.entries(res.headers)) for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) answer.append(k, one);
      const status = res.statusCode ?? 502;
      const empty = status === 204 || status === 304 || init.method === 'HEAD';
      if (empty) res.resume();
      resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage, headers: answer }));
    });
    req.on('error', reject);
    // The caller's deadline for the first answer (api-client.ts); the socket is dropped with it.
    init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
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
