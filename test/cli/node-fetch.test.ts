/**
 * The CLI's HTTP client over node:http (src/client/node-fetch.ts): what the commands read from an
 * answer, a caller's signal bounding the whole exchange (body included), uploads of every body
 * kind the commands send.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from '../../src/client/node-fetch.js';

let server: Server;
let base: string;
const received: Array<{ method: string; type?: string; body: string }> = [];

const read = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = await read(req);
    received.push({ method: req.method!, type: req.headers['content-type'], body });
    if (req.url === '/json') {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-request-id', 'abc');
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.end(JSON.stringify({ ok: true, echo: body }));
    } else if (req.url === '/empty') {
      res.statusCode = 204;
      res.end();
    } else if (req.url === '/missing') {
      res.statusCode = 404;
      res.statusMessage = 'Not Found';
      res.end('{"error":"no such thing"}');
    } else if (req.url === '/trickle') {
      // Headers at once, then a line now and then, never an end: a follow.
      res.write('first\n');
      const timer = setInterval(() => res.write('more\n'), 50);
      res.on('close', () => clearInterval(timer));
    } else if (req.url === '/silent') {
      // Never answers.
    } else {
      res.end(Buffer.from([0, 1, 2, 255]));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('nodeFetch', () => {
  it('reads status, headers, JSON, text and bytes as the commands do', async () => {
    const res = await nodeFetch(new URL('/json', base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('X-Request-Id')).toBe('abc');
    expect(res.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(res.headers.get('absent')).toBeNull();
    expect(await res.json()).toEqual({ ok: true, echo: '{"a":1}' });
    await expect(res.text()).rejects.toThrow(/already read/);

    const bytes = await nodeFetch(new URL('/bytes', base), {});
    expect([...new Uint8Array(await bytes.arrayBuffer())]).toEqual([0, 1, 2, 255]);

    const missing = await nodeFetch(new URL('/missing', base), {});
    expect([missing.status, missing.ok, missing.statusText]).toEqual([404, false, 'Not Found']);
    expect(await missing.text()).toBe('{"error":"no such thing"}');

    const empty = await nodeFetch(new URL('/empty', base), { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    expect(await empty.text()).toBe('');
  });

  it('streams a body as a web stream and sends every body kind the commands upload', async () => {
    const res = await nodeFetch(new URL('/json', base), { method: 'PUT', body: new Uint8Array([104, 105]) });
    const reader = res.body!.getReader();
    let text = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    expect(JSON.parse(text).echo).toBe('hi');

    const form = new FormData();
    form.set('manifest', '{"name":"x"}');
    await (await nodeFetch(new URL('/json', base), { method: 'POST', body: form })).text();
    const upload = received.at(-1)!;
    expect(upload.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload.body).toContain('name="manifest"');
    expect(upload.body).toContain('{"name":"x"}');

    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed '));
        c.enqueue(new TextEncoder().encode('body'));
        c.close();
      },
    });
    expect((await (await nodeFetch(new URL('/json', base), { method: 'POST', body: stream })).json()) as { echo: string }).toMatchObject({ echo: 'streamed body' });
  });

  it('a signal bounds the whole exchange: before the answer, and while its body streams', async () => {
    await expect(nodeFetch(new URL('/silent', base), { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({ name: 'TimeoutError' });
    const res = await nodeFetch(new URL('/trickle', base), { signal: AbortSignal.timeout(300) });
    const reader = res.body!.getReader();
    const lines: string[] = [];
    const reading = (async () => {
      for (;;) {
        const r = await reader.read();
        if (r.done) return 'ended';
        lines.push(new TextDecoder().decode(r.value));
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(lines.join('')).toMatch(/^first\n(more\n)+/);
  });

  it('an unreachable server rejects with the connection error', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await expect(nodeFetch(new URL(`http://127.0.0.1:${port}/`), {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
