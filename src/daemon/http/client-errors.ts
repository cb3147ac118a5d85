import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logger.js';
import { newRequestId } from '../ids.js';
import { LIST_MARK } from './methods.js';
import { Spliced } from './spliced.js';
import { requestTarget } from './request-target.js';
import { httpsIfLoaded } from '../lazy/modules.js';

interface ParseError extends Error {
  code?: string;
  bytesParsed?: number;
  rawPacket?: Buffer;
}

/** What the client is told for each failure Node's parser (or its timeouts) reports. */
function answerFor(err: ParseError, edge: EdgeOptions): { status: number; message: string; headers?: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'request headers too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'chunk extensions too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        message: `request timeout: headers must arrive within ${edge.headersSeconds} s and the whole request within ${edge.requestSeconds} s`,
      };
    case 'HPE_INVALID_METHOD': {
      // A method no route has is the router's 405 (as Vault answers an unsupported operation).
      const { method, path } = requestLineOf(err);
      const allowed = path ? edge.allowedMethods(path) : [];
      if (!allowed.length) return { status: 404, message: `no route for ${method} ${path ?? ''}`.trimEnd() };
      return { status: 405, message: `method ${method} not allowed on ${path}; allowed: ${allowed.join(', ')}`, headers: `Allow: ${allowed.join(', ')}\r\n` };
    }
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, message: 'invalid Content-Length header: it must be one non-negative decimal number' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return { status: 400, message: 'invalid Transfer-Encoding header' };
    default:
      return { status: 400, message: `malformed HTTP request: ${String(err.message).replace(/^Parse Error: /, '')}` };
  }
}

/** Socket-level failures where the peer is gone: nothing to answer, one short log line. */
const PEER_GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'HPE_INVALID_EOF_STATE', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * Answers every request Node's parser rejects in the platform's envelope (spec 1 §7) with an
 * `X-Request-Id`, instead of Node's bare `400` without a body, and closes the connection (the
 * stream position is unknown after a parse error). A Vault `LIST` is not an error: it is handed
 * back to the server as a `GET` marked for the app to restore (methods.ts).
 */
export interface EdgeOptions {
  headersSeconds: number;
  requestSeconds: number;
  /** The router's methods for a path, for the 405 of an unknown method. */
  allowedMethods(pathname: string): string[];
}

export function handleClientErrors(server: Server, log: Logger, edge: EdgeOptions): void {
  server.on('clientError', (err: ParseError, socket: Duplex) => {
    try {
      if (err.code === 'HPE_INVALID_METHOD' && reinjectList(server, err, socket)) return;
      const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
      if (PEER_GONE.has(err.code ?? '')) {
        // With a request in flight its handler logs the one line (with the request id).
        if (!pending) log.info('client closed the connection mid-request', { code: err.code });
        socket.destroy();
        return;
      }
      if (!socket.writable || pending?.headersSent) {
        socket.destroy();
        return;
      }
      const { status, message, headers = '' } = answerFor(err, edge);
      const requestId = newRequestId();
      const body = JSON.stringify({ error: message, request_id: requestId });
      const head =
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n${headers}Connection: close\r\n\r\n`;
      if (err.code === 'HPE_INVALID_METHOD' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT') log.info('request refused by the HTTP parser', { request_id: requestId, status, code: err.code });
      socket.end(head + body, () => socket.destroy());
      // A peer that never reads its answer does not keep the socket.
      setTimeout(() => socket.destroy(), 2_000).unref();
    } catch (e) {
      log.error('could not answer a malformed request', { error: String(e) });
      socket.destroy();
    }
  });
}

/** The unknown method's token and the path of its request line, bounded and printable. */
function requestLineOf(err: ParseError): { method: string; path?: string } {
  const raw = err.rawPacket?.toString('latin1') ?? '';
  const line = raw.slice(requestStart(raw, err.bytesParsed ?? 0));
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}) (\/[\x21-\x7e]{0,2000}) HTTP\/1\.[01]\r?\n/.exec(line);
  if (!m) return { method: /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}/.exec(line)?.[0] ?? '(unreadable)' };
  let path: string | undefined;
  try {
    path = requestTarget(m[2]).pathname;
  } catch {
    path = undefined;
  }
  return { method: m[1]!, path };
}

/** Where the failing request begins inside the packet: after the previous request's last line. */
function requestStart(raw: string, failedAt: number): number {
  const nl = raw.lastIndexOf('\n', Math.max(0, failedAt - 1));
  return nl < 0 ? 0 : nl + 1;
}

/**
 * Re-parses a `LIST` request as a `GET` carrying the marker header: the rest of the packet and
 * everything the client sends later go to a fresh parser over the same socket. Only a request line
 * that arrived whole in one packet is recognised (the case of every real client); a split one gets
 * the 501 of any unknown method.
 */
function reinjectList(server: Server, err: ParseError, socket: Duplex): boolean {
  const raw = err.rawPacket;
  if (!raw) return false;
  const text = raw.toString('latin1');
  const start = requestStart(text, err.bytesParsed ?? 0);
  const lineEnd = text.indexOf('\r\n', start);
  if (!text.startsWith('LIST ', start) || lineEnd < 0) return false;
  detachParser(socket);
  const rewritten = Buffer.concat([
    Buffer.from('GET', 'latin1'),
    raw.subarray(start + 4, lineEnd + 2),
    Buffer.from(`${LIST_MARK}: 1\r\n`, 'latin1'),
    raw.subarray(lineEnd + 2),
  ]);
  // An https server hands decrypted sockets to its HTTP parser on 'secureConnection' (without
  // node:https loaded, no server here is one: lazy/modules.ts).
  const https = httpsIfLoaded();
  server.emit(https && server instanceof https.Server ? 'secureConnection' : 'connection', new Spliced(socket, rewritten));
  return true;
}

/**
 * Takes the socket back from Node's failed parser: its listeners would feed it the rest of the
 * stream (each chunk another parse error) and its timeout tracking would fire on this socket.
 */
function detachParser(socket: Duplex): void {
  const s = socket as Duplex & { parser?: { _consumed?: boolean; unconsume?(): void; remove?(): void } | null };
  const parser = s.parser;
  if (parser) {
    if (parser._consumed) parser.unconsume?.();
    parser._consumed = false;
    parser.remove?.();
  }
  for (const ev of ['data', 'end', 'drain', 'timeout', 'pause', 'resume']) socket.removeAllListeners(ev);
  s.parser = null;
}
