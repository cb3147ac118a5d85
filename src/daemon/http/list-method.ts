import { request } from 'node:http';
import type { Socket } from 'node:net';

/** Only the Vault API takes LIST; anywhere else it stays the unknown method it is. */
const LIST_PREFIX = '/vault/v1/';
/** Headers that describe the client's connection to us, not the request. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade', 'proxy-connection']);
const MAX_HEAD = 16 * 1024;

interface ParserError extends Error {
  code?: string;
  rawPacket?: Buffer;
}

/** `{target, headers}` of a bodiless `LIST <target> HTTP/1.x` request head, or undefined. */
function parseListHead(raw: Buffer): { target: string; headers: [string, string][] } | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0 || end > MAX_HEAD) return undefined;
  const [line, ...fields] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^LIST (\/\S*) HTTP\/1\.[01]$/.exec(line ?? '');
  if (!m || !m[1]!.startsWith(LIST_PREFIX)) return undefined;
  const headers: [string, string][] = [];
  for (const f of fields) {
    const colon = f.indexOf(':');
    if (colon <= 0) return undefined;
    const name = f.slice(0, colon).trim().toLowerCase();
    if (!HOP_HEADERS.has(name)) headers.push([name, f.slice(colon + 1).trim()]);
  }
  // A LIST carries no body; one announced is not a request this mapping understands.
  if (fields.some((f) => /^(content-length:\s*[1-9]|transfer-encoding:)/i.test(f))) return undefined;
  return { target: m[1]!, headers };
}

/**
 * Vault clients (hvac's `list_secrets`, `vault kv list`) send the `LIST` method, which Node's HTTP
 * parser does not know: it rejects the request (HPE_INVALID_METHOD) before any route sees it.
 * Vault itself treats `GET ...?list=true` as the same operation, so a LIST under `/vault/v1/`
 * is answered by sending that GET to this very listener and relaying the answer, with
 * `Connection: close` (the parser of this connection stopped at the LIST). Returns false for any
 * other parser error, which the caller answers.
 */
export function answerListMethod(err: ParserError, socket: Socket): boolean {
  if (err.code !== 'HPE_INVALID_METHOD' || !err.rawPacket || !socket.writable) return false;
  const head = parseListHead(err.rawPacket);
  if (!head) return false;
  const url = new URL(head.target, 'http://localhost');
  url.searchParams.set('list', 'true');
  socket.on('error', () => socket.destroy());
  const fail = () => {
    const body = '{"errors":["LIST could not be served"]}';
    if (socket.writable) socket.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    else socket.destroy();
  };
  const req = request(
    { host: socket.localAddress, port: socket.localPort, method: 'GET', path: url.pathname + url.search, headers: Object.fromEntries(head.headers), family: socket.localFamily === 'IPv6' ? 6 : 4 },
    (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let out = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n`;
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (!HOP_HEADERS.has(res.rawHeaders[i]!.toLowerCase())) out += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`;
        }
        out += `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
        socket.end(Buffer.concat([Buffer.from(out, 'latin1'), body]));
      });
    },
  );
  req.on('error', fail);
  req.end();
  return true;
}
