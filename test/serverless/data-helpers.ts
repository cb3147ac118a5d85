import { createServer, type Server } from 'node:http';
import { request } from 'undici';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workloadConfigFromEnv, type WorkloadConfig } from '../../src/daemon/config.js';
import { ApiError } from '../../src/daemon/http/errors.js';
import { ServerlessDataPlane } from '../../src/daemon/services/serverless/runtime/data-plane.js';
import type { SourceFile } from '../../src/daemon/services/serverless/runtime/launcher.js';
import type { RevisionReport, RevisionTemplate, Route, Scaling, ServiceDesired } from '../../src/daemon/services/serverless/plane.js';

/**
 * A web server for tests, in Python: answers JSON naming its revision and its instance, sleeps
 * for ?ms=, echoes POST bodies, logs a line per request. Runs as a source folder's main.py and,
 * through a command override, in the platform-python:local image.
 */
export const SERVER_PY = `
import json, os, sys, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs
INSTANCE = os.urandom(4).hex()
class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    disable_nagle_algorithm = True
    def answer(self, extra):
        u = urlparse(self.path)
        if u.path == '/crash':
            os._exit(1)
        q = parse_qs(u.query)
        if 'ms' in q:
            time.sleep(int(q['ms'][0]) / 1000)
        body = json.dumps(dict(revision=os.environ.get('K_REVISION'), instance=INSTANCE, path=self.path, msg=os.environ.get('MSG', ''), port=os.environ.get('PORT'), headers={k.lower(): v for k, v in self.headers.items()}, **extra)).encode()
        print('served ' + self.path, flush=True)
        self.send_response(200)
        self.send_header('content-type', 'application/json')
        self.send_header('content-length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.answer({})
    def do_POST(self):
        n = int(self.headers.get('content-length') or 0)
        self.answer({'body': self.rfile.read(n).decode()})
    def log_message(self, *a):
        pass
print('listening on ' + os.environ['PORT'], flush=True)
ThreadingHTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()
`;

export const CRASH_PY = `import sys\nprint('boom: DATABASE_URL is not set', file=sys.stderr, flush=True)\nsys.exit(2)\n`;
export const SILENT_PY = `import time\nprint('warming up forever', flush=True)\ntime.sleep(3600)\n`;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A data plane on a fresh state directory, plus a tiny front server that routes as the daemon does. */
export interface Harness {
  plane: ServerlessDataPlane;
  home: string;
  url: string;
  /** internal listener: path routes served with internal=true. */
  internalUrl: string;
  reports: Array<{ serviceId: string; revision: string; r: RevisionReport }>;
  sources: Map<string, SourceFile[]>;
  close(): Promise<void>;
}

export async function harness(opts: { idleMs?: number; startTimeoutMs?: number; home?: string; portMin?: number; queueWaitMs?: number; egressAllow?: string; isolation?: 'none' } = {}): Promise<Harness> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'platform-sl-'));
  const base = workloadConfigFromEnv({});
  const portMin = opts.portMin ?? 36000 + Math.floor(Math.random() * 20) * 100;
  const workloads: WorkloadConfig = { ...base, idleMs: opts.idleMs ?? 60_000, restartBackoffMs: 200, portMin, portMax: portMin + 99, egressAllow: opts.egressAllow, ...(opts.isolation ? { isolation: opts.isolation } : {}) };
  // The front servers stand for the daemon's main and internal listeners (known once they listen).
  const listeners = [0, 0];
  const sources = new Map<string, SourceFile[]>();
  const plane = new ServerlessDataPlane({
    home,
    workloads,
    startTimeoutMs: opts.startTimeoutMs ?? 20_000,
    queueWaitMs: opts.queueWaitMs,
    platformPorts: () => listeners,
    readSource: async (ref) => {
      const f = sources.get(ref);
      if (!f) throw new Error('no such source');
      return f;
    },
  });
  const reports: Harness['reports'] = [];
  plane.onReport((serviceId, revision, r) => reports.push({ serviceId, revision, r }));
  const front = (internal: boolean) =>
    createServer(async (req, res) => {
      const ctx = { requestId: 'req_test', ip: req.socket.remoteAddress ?? '', req, res } as any;
      try {
        if (!internal && plane.matchesHost(String(req.headers.host ?? ''))) return await plane.serveHost(ctx);
        if (plane.matchesPath((req.url ?? '/').split('?')[0]!)) return await plane.servePath(ctx, internal);
        throw new ApiError(404, 'not found');
      } catch (e) {
        const status = e instanceof ApiError ? e.status : 500;
        if (res.headersSent) return void res.destroy();
        res.writeHead(status, { 'content-type': 'application/json', ...(e instanceof ApiError ? e.headers : {}) });
        res.end(JSON.stringify({ error: (e as Error).message, request_id: 'req_test' }));
      }
    });
  const listen = async (s: Server) => {
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  const pub = front(false);
  const int = front(true);
  const url = await listen(pub);
  const internalUrl = await listen(int);
  listeners[0] = Number(new URL(url).port);
  listeners[1] = Number(new URL(internalUrl).port);
  return {
    plane,
    home,
    url,
    internalUrl,
    reports,
    sources,
    async close() {
      pub.closeAllConnections();
      int.closeAllConnections();
      await Promise.all([new Promise((r) => pub.close(r)), new Promise((r) => int.close(r))]);
      await plane.stop();
    },
  };
}

let seq = 0;
export const SHORT = 'tstprj';

export function template(service: string, n: number, image: string, extra: Partial<RevisionTemplate> = {}): RevisionTemplate {
  return {
    serviceId: `svc-${service}`,
    projectId: 'p1',
    projectShort: SHORT,
    service,
    revision: `${service}-${String(n).padStart(5, '0')}`,
    generation: n,
    image,
    env: { PLATFORM_REQUEST_TIMEOUT_SECONDS: '30' },
    port: 8080,
    cpus: 1,
    memoryBytes: 512 * 1024 ** 2,
    timeoutSeconds: 30,
    ...extra,
  };
}

export function desired(service: string, revisions: RevisionTemplate[], traffic: Route[], scaling: Partial<Scaling> = {}, published = true): ServiceDesired {
  return {
    serviceId: `svc-${service}`,
    projectId: 'p1',
    projectShort: SHORT,
    name: service,
    revisions,
    traffic,
    scaling: { minScale: 0, maxScale: 10, containerConcurrency: 80, ...scaling },
    published,
  };
}

/** A source reference for files (content-addressed by a counter: tests only need uniqueness). */
export function source(h: Harness, files: Record<string, string>): string {
  const hex = (++seq).toString(16).padStart(64, 'a');
  const ref = `source.platform.local/${SHORT}/sha256-${hex}`;
  h.sources.set(
    ref,
    Object.entries(files).map(([path, content]) => ({ path, content: Buffer.from(content), mode: 0o644 })),
  );
  return ref;
}

/** Waits until a revision's report reaches a state (event-driven: polls the plane's own report). */
export async function waitReport(h: Harness, serviceId: string, revision: string, state: RevisionReport['state'], ms = 60_000): Promise<RevisionReport> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = h.plane.report(serviceId, revision);
    if (r?.state === state) return r;
    if (Date.now() > deadline) throw new Error(`${revision} never became ${state}: ${JSON.stringify(r)}`);
    await sleep(20);
  }
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A request to a service address through the front server (Host header set). */
export async function call(h: Harness, host: string, path = '/', init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; text: string }> {
  const res = await request(h.url + path, { method: (init.method ?? 'GET') as 'GET', body: init.body, headers: { ...init.headers, host } });
  const text = await res.body.text();
  const status = res.statusCode;
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // text
  }
  return { status, body, text };
}

export const hostOf = (name: string, tag?: string) => `${tag ? `${tag}-` : ''}${name}-${SHORT}.apps.localhost`;
