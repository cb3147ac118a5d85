// The door of a serverless instance (docs/decisions/serverless.md, Isolation). It runs inside the
// instance's own network namespace, which has only `lo`, and is the only way in and out:
//   in:        <dir>/door.sock  -> 127.0.0.1:$PORT (a plain byte pipe)
//   readiness: <dir>/probe.sock -> writes 1 when 127.0.0.1:$PORT accepts a connection, else 0
//   platform:  127.0.0.1:<each --platform port> -> the daemon's bridge, same host and port
//   internet:  an HTTP proxy on 127.0.0.1:3128 (CONNECT and absolute-form) -> the bridge
// With a command it runs it (stdio inherited), forwards SIGTERM/SIGINT and exits as it did; with
// --no-child it only serves (the docker driver's containers run their own process).
// Plain JavaScript with node: built-ins only: it runs from the source tree and from dist alike.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { connect, createServer, Socket } from 'node:net';
import { join } from 'node:path';

export const PROXY_PORT = 3128;
const LINE_MAX = 512;

function parseArgs(argv) {
  const o = { platform: [], child: true, command: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      o.command = argv.slice(i + 1);
      break;
    }
    if (a === '--no-child') o.child = false;
    else if (a === '--dir') o.dir = argv[++i];
    else if (a === '--bridge') o.bridge = argv[++i];
    else if (a === '--port') o.port = Number(argv[++i]);
    else if (a === '--platform') o.platform = argv[++i].split(',').filter(Boolean).map(Number);
    else if (a === '--lifeline') o.lifeline = Number(argv[++i]);
    else throw new Error(`door: unknown argument ${a}`);
  }
  if (!o.dir || !o.bridge || !(o.port > 0)) throw new Error('door: --dir, --bridge and --port are required');
  return o;
}

const opts = parseArgs(process.argv.slice(2));

/** Ends both sides of a pair on the first error or close of either. */
function join2(a, b) {
  const cut = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', cut);
  b.on('error', cut);
  a.on('close', cut);
  b.on('close', cut);
  a.pipe(b);
  b.pipe(a);
}

/**
 * A connection to host:port through the daemon's bridge: resolves the socket once the bridge
 * said OK (what follows is the target's bytes), rejects with the bridge's reason.
 */
function viaBridge(host, port) {
  return new Promise((resolve, reject) => {
    const s = connect({ path: opts.bridge, allowHalfOpen: true });
    let said = '';
    const fail = (why) => {
      s.destroy();
      reject(new Error(why));
    };
    s.setTimeout(15_000, () => fail('the platform bridge did not answer'));
    s.once('error', (e) => fail(`the platform bridge is unreachable: ${e.message}`));
    s.once('connect', () => s.write(`${host} ${port}\n`));
    const onData = (c) => {
      said += c.toString('latin1');
      const nl = said.indexOf('\n');
      if (nl < 0) {
        if (said.length > LINE_MAX) fail('the platform bridge answered nonsense');
        return;
      }
      s.off('data', onData);
      s.setTimeout(0);
      s.removeAllListeners('error');
      const line = said.slice(0, nl);
      const rest = said.slice(nl + 1);
      if (line !== 'OK') return fail(line.startsWith('ERR ') ? line.slice(4) : 'the platform bridge refused');
      s.pause();
      if (rest) s.unshift(Buffer.from(rest, 'latin1'));
      resolve(s);
    };
    s.on('data', onData);
  });
}

/** Listens on a unix socket path, replacing a stale one. */
function listenUnix(server, path) {
  rmSync(path, { force: true });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
}

function listenTcp(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

// Half-open allowed: a client that finishes sending still gets the whole answer.
const inbound = createServer({ allowHalfOpen: true }, (c) => {
  const up = connect({ port: opts.port, host: '127.0.0.1', allowHalfOpen: true });
  join2(c, up);
});

const probe = createServer((c) => {
  c.on('error', () => c.destroy());
  const t = connect(opts.port, '127.0.0.1');
  const answer = (ok) => {
    t.destroy();
    c.end(ok ? '1' : '0');
  };
  t.setTimeout(1000, () => answer(false));
  t.once('connect', () => answer(true));
  t.once('error', () => answer(false));
});

/** The daemon's own listeners, reached as 127.0.0.1:<port> inside the namespace. */
const platform = opts.platform.map((p) =>
  createServer({ allowHalfOpen: true }, (c) => {
    c.pause();
    c.on('error', () => c.destroy());
    viaBridge('127.0.0.1', p).then(
      (up) => join2(c, up),
      () => c.destroy(),
    );
  }),
);

const HOP = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

function refuse(res, status, why) {
  if (res.headersSent) return res.destroy();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end(`${why}\n`);
}

/** host:port of a CONNECT target or a URL, the port defaulted. */
function target(authority, defaultPort) {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:]+)(?::(\d+))?$/.exec(authority);
  if (!m) return undefined;
  const port = m[2] ? Number(m[2]) : defaultPort;
  return port > 0 && port < 65536 ? { host: m[1], port } : undefined;
}

const proxy = createHttpServer((req, res) => {
  let url;
  try {
    url = new URL(req.url ?? '');
  } catch {
    return refuse(res, 400, 'the platform proxy takes absolute-form requests (http://host/path) and CONNECT');
  }
  if (url.protocol !== 'http:') return refuse(res, 400, `the platform proxy forwards http: URLs; use CONNECT for ${url.protocol}`);
  const t = target(url.host, 80);
  if (!t) return refuse(res, 400, 'bad target');
  req.pause();
  viaBridge(t.host, t.port).then(
    (sock) => {
      const headers = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const k = req.rawHeaders[i].toLowerCase();
        if (HOP.has(k)) continue;
        const v = req.rawHeaders[i + 1];
        headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
      }
      headers.connection = 'close';
      const up = httpRequest({ createConnection: () => sock, method: req.method, path: `${url.pathname}${url.search}`, headers }, (ur) => {
        const out = {};
        for (let i = 0; i < ur.rawHeaders.length; i += 2) {
          const k = ur.rawHeaders[i];
          if (HOP.has(k.toLowerCase())) continue;
          (out[k] ??= []).push(ur.rawHeaders[i + 1]);
        }
        res.writeHead(ur.statusCode ?? 502, ur.statusMessage, out);
        ur.pipe(res);
        ur.on('error', () => res.destroy());
      });
      up.on('error', (e) => refuse(res, 502, `the platform proxy could not reach ${t.host}:${t.port}: ${e.message}`));
      // The client's parser is attached by now: the bridge's bytes may flow.
      up.once('socket', () => sock.resume());
      req.pipe(up);
      req.resume();
    },
    (e) => refuse(res, 403, `the platform refused ${t.host}:${t.port}: ${e.message}`),
  );
});
proxy.on('connect', (req, client, head) => {
  client.on('error', () => client.destroy());
  const t = target(req.url ?? '', 443);
  if (!t) return client.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  viaBridge(t.host, t.port).then(
    (up) => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head?.length) up.write(head);
      join2(client, up);
      up.resume();
    },
    (e) => {
      const body = `the platform refused ${t.host}:${t.port}: ${e.message}\n`;
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    },
  );
});
proxy.on('clientError', (_e, s) => s.destroy());

for (const s of [inbound, probe, ...platform]) s.on('error', () => undefined);
// One bad exchange must not take the door, and with it the instance, down.
process.on('uncaughtException', (e) => process.stderr.write(`platform door: ${e?.stack ?? e}\n`));

async function main() {
  // Everything listens before the command starts: it may use the proxy and the platform at once.
  await listenTcp(proxy, PROXY_PORT);
  for (let i = 0; i < platform.length; i++) await listenTcp(platform[i], opts.platform[i]);
  await listenUnix(inbound, join(opts.dir, 'door.sock'));
  await listenUnix(probe, join(opts.dir, 'probe.sock'));
  if (opts.lifeline !== undefined) {
    // The daemon holds the other end: when it dies (even kill -9), the door goes too.
    const life = new Socket({ fd: opts.lifeline, readable: true, writable: false });
    life.on('data', () => undefined);
    life.on('close', () => process.exit(0));
    life.on('error', () => process.exit(0));
  }
  if (!opts.child) {
    for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
    return;
  }
  if (!opts.command.length) throw new Error('door: no command to run (or --no-child)');
  const child = spawn(opts.command[0], opts.command.slice(1), { stdio: 'inherit' });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('error', (e) => {
    process.stderr.write(`${opts.command[0]}: ${e.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      // Exit as the command did, so the instance's reason is Signal<S> as without the door.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

main().catch((e) => {
  process.stderr.write(`platform door: ${e.message}\n`);
  process.exit(126);
});
