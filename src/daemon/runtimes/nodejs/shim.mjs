// Function shim for the nodejs runtime (spec 1 §4.13 and §6.1).
//
// Copied into a workload's .platform/ directory; the user's index.mjs, index.js or index.cjs,
// one directory up, exports handle(event), synchronous or async, as an ES module export or
// through module.exports. Listens on 127.0.0.1:$PORT. Node built-ins only.
import { createServer } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MAX_BODY = 8 * 1024 * 1024;
const LINGER_BYTES = 64 * 1024 * 1024;
const CE_CONTENT_TYPE = 'application/cloudevents+json';
const functionDir = dirname(dirname(fileURLToPath(import.meta.url)));
// The daemon hands each instance a secret and sends it with every request it makes; a request
// without it never reaches the handler (docs/decisions/agents.md, "Instances answer only the
// daemon"). It leaves the environment before the handler's module loads.
const SECRET_ENV = 'PLATFORM_INSTANCE_SECRET';
const SECRET_HEADER = 'x-platform-instance-secret';
const FORBIDDEN = 'forbidden: this address answers only requests routed by the platform';

function takeInstanceSecret() {
  const value = process.env[SECRET_ENV];
  if (!value) fail(`${SECRET_ENV} is not set (instances are started by the platform daemon)`);
  scrubProcessEnviron(SECRET_ENV);
  delete process.env[SECRET_ENV]; // also unsetenv(3), so child processes do not inherit it
  return Buffer.from(value);
}

/**
 * Zeroes a variable's value in the process's initial environment block, which
 * /proc/<pid>/environ reads. Best effort: where /proc or writing our own memory file is not
 * allowed, only process.env loses it.
 */
function scrubProcessEnviron(name) {
  try {
    const block = readFileSync('/proc/self/environ');
    const prefix = Buffer.from(`${name}=`);
    let start;
    if (block.subarray(0, prefix.length).equals(prefix)) start = prefix.length;
    else {
      const at = block.indexOf(Buffer.concat([Buffer.from([0]), prefix]));
      if (at < 0) return;
      start = at + 1 + prefix.length;
    }
    let end = block.indexOf(0, start);
    if (end < 0) end = block.length;
    const stat = readFileSync('/proc/self/stat', 'latin1');
    const envStart = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[47]); // field 50 of proc(5)
    const fd = openSync('/proc/self/mem', 'r+');
    try {
      writeSync(fd, Buffer.alloc(end - start), 0, end - start, envStart + start);
    } finally {
      closeSync(fd);
    }
  } catch {
    // best effort, see above
  }
}

function authorized(req, secret) {
  const got = Buffer.from(String(req.headers[SECRET_HEADER] ?? ''));
  return got.length === secret.length && timingSafeEqual(got, secret);
}

async function loadHandler() {
  const file = ['index.mjs', 'index.js', 'index.cjs'].map((f) => join(functionDir, f)).find((f) => existsSync(f));
  if (!file) fail(`index.mjs or index.js not found in ${functionDir}`);
  let mod;
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (e) {
    // Node before 22 reads a .js file outside a "type": "module" package as CommonJS, so ES
    // syntax fails there: load it again as an ES module through an .mjs twin beside it.
    if (!(e instanceof SyntaxError) || !file.endsWith('.js')) throw e;
    // The build makes the twin (a sandboxed workload's directory is read-only); made here otherwise.
    const twin = join(functionDir, '.platform-index.mjs');
    if (!existsSync(twin)) copyFileSync(file, twin);
    mod = await import(pathToFileURL(twin).href);
  }
  // CommonJS modules arrive as a default export (plus named exports Node could detect).
  const handle = mod.handle ?? mod.default?.handle ?? (typeof mod.default === 'function' ? mod.default : undefined);
  if (typeof handle !== 'function') fail(`${file} must export a function named handle`);
  return handle;
}

function fail(message) {
  console.error(`function shim: ${message}`);
  process.exit(1);
}

class BodyError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Collects the body, refusing it (413) as soon as it passes the cap. */
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const tooBig = () => new BodyError(413, `body exceeds ${MAX_BODY} bytes`);
    if (Number(req.headers['content-length']) > MAX_BODY) return reject(tooBig());
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooBig());
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The body as the handler's event: any JSON value passes through unwrapped; other text is refused. */
function parseJson(buf) {
  if (buf.length === 0) return {};
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new BodyError(400, `invalid JSON body: ${err.message}`);
  }
}

function structuredData(buf) {
  let envelope;
  try {
    envelope = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new BodyError(400, `invalid CloudEvent envelope: ${err.message}`);
  }
  if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope)) {
    throw new BodyError(400, 'invalid CloudEvent envelope: not a JSON object');
  }
  if ('data_base64' in envelope) {
    const text = typeof envelope.data_base64 === 'string' ? envelope.data_base64 : '';
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
      throw new BodyError(400, 'invalid CloudEvent envelope: data_base64 is not valid base64');
    }
    return parseJson(Buffer.from(text, 'base64'));
  }
  return 'data' in envelope ? envelope.data : {};
}

/** Sends a serialized JSON body (or none for 204 and 304). */
function sendRaw(res, status, text, close = false) {
  const headers = {};
  if (close) headers.Connection = 'close';
  if (status === 204 || status === 304) {
    res.writeHead(status, headers).end();
    return;
  }
  const body = Buffer.from(text);
  headers['Content-Type'] = 'application/json';
  headers['Content-Length'] = body.length;
  res.writeHead(status, headers).end(body);
}

const send = (res, status, value, close = false) => sendRaw(res, status, JSON.stringify(value), close);

const describe = (err) =>
  `handler raised ${err instanceof Error ? `${err.name}: ${err.message}` : `${typeof err}: ${String(err)}`}`;

async function runPlain(res, handle, event) {
  let result;
  try {
    result = await handle(event);
  } catch (err) {
    console.error(err);
    return send(res, 500, { error: describe(err) });
  }
  let status = 200;
  if (result !== null && typeof result === 'object' && 'statusCode' in result) {
    status = result.statusCode;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      return send(res, 500, { error: `handler returned an invalid statusCode: ${JSON.stringify(status)}` });
    }
  }
  let body;
  try {
    body = JSON.stringify(result) ?? 'null'; // undefined (no return value) is JSON null
  } catch (err) {
    return send(res, 500, { error: `handler returned a value that is not JSON: ${err.message}` });
  }
  sendRaw(res, status, body);
}

async function runCloudEvent(res, handle, event) {
  try {
    await handle(event);
  } catch (err) {
    // 400, not 500: the sender must not redeliver (spec 1 §6.1).
    console.error(err);
    return send(res, 400, { error: describe(err) });
  }
  sendRaw(res, 204, '');
}

async function route(req, res, handle) {
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    if (req.url.split('?', 1)[0] === '/healthz') return send(res, 200, { status: 'ok' });
    return runPlain(res, handle, {});
  }
  let raw;
  try {
    raw = await readBody(req);
  } catch (err) {
    if (!(err instanceof BodyError)) throw err;
    // Answer now and discard the rest of the upload on a live connection (Node's own dump of
    // unread bodies): closing with unread input would reset the connection and the client
    // could lose the 413. Past a bound we stop being polite.
    send(res, err.status, { error: err.message });
    let discarded = 0;
    req.on('data', (chunk) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES) req.socket.destroy();
    });
    req.resume();
    return;
  }
  try {
    const contentType = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
    if (req.headers['ce-id'] !== undefined) return await runCloudEvent(res, handle, parseJson(raw));
    if (contentType === CE_CONTENT_TYPE) return await runCloudEvent(res, handle, structuredData(raw));
    return await runPlain(res, handle, parseJson(raw));
  } catch (err) {
    if (err instanceof BodyError) return send(res, err.status, { error: err.message });
    throw err;
  }
}

const secret = takeInstanceSecret();
const handle = await loadHandler();
const server = createServer((req, res) => {
  if (!authorized(req, secret)) {
    // The body is never read: answer, then let the connection go.
    send(res, 403, { error: FORBIDDEN }, true);
    req.resume();
    return;
  }
  route(req, res, handle).catch((err) => {
    console.error(err);
    if (!res.headersSent) send(res, 500, { error: `function shim failed: ${err.message}` });
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1');
