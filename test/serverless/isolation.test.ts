import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerSkipReason } from '../../bench/lib.js';
import { sandboxCommand } from '../../src/daemon/runtime/sandbox.js';
import { egressVerdict, parseEgressAllow } from '../../src/daemon/egress.js';
import { archive, deployForm, waitState } from '../agents/helpers.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { cast } from '../helpers/fixtures.js';
import { ownWorkloadPorts } from '../secrets/agent-fixture.js';
import { CRASH_PY, SERVER_PY, SILENT_PY, call, desired, harness, hostOf, source, template, waitFor, waitReport, type Harness } from './data-helpers.js';

/**
 * Every serverless instance in its own network namespace behind its door (docs/decisions/serverless.md,
 * Isolation): nothing of it listens on the host, so another workload cannot call an unpublished
 * service around the router; from inside, the platform's listeners and allowed destinations work
 * through the door and the daemon's bridge, the host's other loopback servers do not.
 */
const MARKER = `marker-${Math.random().toString(36).slice(2)}`;

/** A's server: answers its marker, and from inside its namespace tries what the test asks. */
const PROBE_PY = `
import json, os, socket, http.client, urllib.request, urllib.error
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs
def fetch(url, opener=None):
    try:
        r = (opener or urllib.request.build_opener()).open(url, timeout=5)
        return {'status': r.status, 'body': r.read().decode()}
    except urllib.error.HTTPError as e:
        return {'status': e.code, 'body': e.read().decode()}
    except Exception as e:
        return {'error': type(e).__name__ + ': ' + str(e)}
def direct(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect((host, port))
        s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')
        return {'connected': True, 'body': s.recv(4096).decode(errors='replace')}
    except Exception as e:
        return {'connected': False, 'error': type(e).__name__}
    finally:
        s.close()
def tunnel(host, port):
    c = http.client.HTTPConnection('127.0.0.1', 3128, timeout=5)
    c.set_tunnel(host, port)
    try:
        c.request('GET', '/through-tunnel')
        r = c.getresponse()
        return {'status': r.status, 'body': r.read().decode()}
    except Exception as e:
        return {'error': type(e).__name__ + ': ' + str(e)}
class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def do_GET(self):
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        if u.path == '/fetch': out = fetch(q['url'])
        elif u.path == '/direct': out = direct(q['host'], int(q['port']))
        elif u.path == '/tunnel': out = tunnel(q['host'], int(q['port']))
        elif u.path == '/env': out = {k: os.environ.get(k) for k in ('PORT', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY')}
        else: out = {'marker': os.environ['MARKER'], 'port': os.environ['PORT']}
        body = json.dumps(out).encode()
        self.send_response(200)
        self.send_header('content-type', 'application/json')
        self.send_header('content-length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()
`;

/** A host-network workload (as a function's sandbox is): scans host loopback ports, looks for the state directory. */
const SCAN_PY = `
import json, os, socket, sys
lo, hi, home, marker = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
seen, opened = [], 0
for port in range(lo, hi + 1):
    s = socket.socket(); s.settimeout(0.2)
    try:
        s.connect(('127.0.0.1', port))
    except Exception:
        s.close(); continue
    opened += 1
    try:
        s.sendall(b'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n'); data = s.recv(2048).decode(errors='replace')
    except Exception:
        data = ''
    s.close()
    if marker in data: seen.append(port)
print(json.dumps({'open': opened, 'marker_ports': seen, 'home_visible': os.path.exists(home)}))
`;

/** The same scan as a deployed function: its orders travel in `message` as JSON. */
const SCAN_FUNCTION_PY = `import json, os, socket

def handle(event):
    o = json.loads(event["message"])
    answers, marker_ports = {}, []
    for port in range(o["lo"], o["hi"] + 1):
        s = socket.socket(); s.settimeout(0.2)
        try:
            s.connect(("127.0.0.1", port))
        except Exception:
            s.close(); continue
        try:
            s.sendall(b"GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n"); data = s.recv(4096).decode(errors="replace")
        except Exception:
            data = ""
        s.close()
        answers[str(port)] = data.split("\\r\\n", 1)[0]
        if o["marker"] in data:
            marker_ports.append(port)
    return {"answers": answers, "marker_ports": marker_ports, "visible": [p for p in o["paths"] if os.path.exists(p)]}
`;

const servers: Server[] = [];
async function textServer(host: string, text: string): Promise<number> {
  const s = createServer((req, res) => res.end(`${text} ${req.url}`));
  await new Promise<void>((r) => s.listen(0, host, () => r()));
  servers.push(s);
  return (s.address() as AddressInfo).port;
}

let h: Harness;
let hostSecret: number;
let allowed: number;
beforeAll(async () => {
  hostSecret = await textServer('127.0.0.2', 'host-secret');
  allowed = await textServer('127.0.0.2', 'allowed-server');
  h = await harness({ idleMs: 60_000, startTimeoutMs: 3000, portMin: 20000 + Math.floor(Math.random() * 90) * 100, egressAllow: `127.0.0.2:${allowed}` });
});
afterAll(async () => {
  await h?.close();
  for (const s of servers) s.close();
});

const inside = async (path: string) => (await call(h, hostOf('probe'), path)).body;

describe('serverless isolation: the door (process driver)', { timeout: 120_000 }, () => {
  it('an unpublished service is unreachable around the router: no host port answers its marker, its door is invisible', async () => {
    const a = template('probe', 1, source(h, { 'main.py': PROBE_PY }), { env: { MARKER } });
    const b = template('other', 1, source(h, { 'main.py': SERVER_PY }), { env: { MSG: 'from b' } });
    h.plane.apply(desired('probe', [a], [{ revision: a.revision, percent: 100 }], { minScale: 1 }, true));
    h.plane.apply(desired('other', [b], [{ revision: b.revision, percent: 100 }], {}, false));
    const r = await waitReport(h, 'svc-probe', a.revision, 'ready');
    expect(r.network).toEqual({ isolated: true });
    expect((await waitReport(h, 'svc-other', b.revision, 'ready')).network).toEqual({ isolated: true });
    expect((await inside('/')).marker).toBe(MARKER);
    // Nothing of it on the host: the ledger names no port, the instance's own directory holds its sockets only.
    const doors = readdirSync(join(h.home, 'serverless', 'doors'));
    expect(doors.length).toBe(2);
    for (const d of doors) expect(readdirSync(join(h.home, 'serverless', 'doors', d)).sort()).toEqual(['door.sock', 'probe.sock']);

    // The host side (any local process): every port of the workload range and the harness's is closed
    // or something else; none answers A's marker.
    const hits: number[] = [];
    await scanHost(20000, 29999, async (port, sock) => {
      const text = await exchange(sock);
      if (text.includes(MARKER)) hits.push(port);
    });
    expect(hits).toEqual([]);

    // A host-network workload in the platform's sandbox (as a function runs): same, and no state directory.
    const scan = await sandboxed(SCAN_PY, ['20000', '29999', h.home, MARKER]);
    console.log(`host-network sandbox scan of 20000-29999: ${scan.open} open ports, marker on ${scan.marker_ports.length}`);
    expect(scan.marker_ports).toEqual([]);
    expect(scan.home_visible).toBe(false);
  });

  it('from inside: internal_url of another service and the daemon API work; other host loopback servers are refused, allowed ones pass the proxy and a CONNECT tunnel', async () => {
    const env = await inside('/env');
    expect(env).toEqual({ PORT: '8080', HTTP_PROXY: 'http://127.0.0.1:3128', HTTPS_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'localhost,127.0.0.1,::1' });

    // internal_url of service B, through the door's 127.0.0.1:<internal port> and the bridge.
    const internalUrl = `${h.internalUrl}/services/tstprj/other/hello`;
    const viaInternal = await inside(`/fetch?url=${encodeURIComponent(internalUrl)}`);
    expect(viaInternal.status, JSON.stringify(viaInternal)).toBe(200);
    expect(JSON.parse(viaInternal.body)).toMatchObject({ msg: 'from b', path: '/hello' });
    // The daemon's main listener: reached (the front server's own 404 envelope answers).
    const api = await inside(`/fetch?url=${encodeURIComponent(`${h.url}/v1/nothing`)}`);
    expect(api.status).toBe(404);
    expect(JSON.parse(api.body).request_id).toBe('req_test');

    // Another loopback server of the host: refused by direct connect (nothing there in the namespace) and by the proxy.
    expect((await inside(`/direct?host=127.0.0.2&port=${hostSecret}`)).connected).toBe(false);
    expect((await inside(`/direct?host=127.0.0.1&port=${hostSecret}`)).connected).toBe(false);
    const refused = await inside(`/fetch?url=${encodeURIComponent(`http://127.0.0.2:${hostSecret}/x`)}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('loopback');
    expect(refused.body).not.toContain('host-secret');
    const tunnelRefused = await inside(`/tunnel?host=127.0.0.2&port=${hostSecret}`);
    expect(JSON.stringify(tunnelRefused)).toMatch(/403/);
    // Link-local (the cloud metadata address) and unspecified destinations are refused too.
    expect((await inside(`/fetch?url=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`)).status).toBe(403);
    expect((await inside(`/fetch?url=${encodeURIComponent(`http://0.0.0.0:${hostSecret}/`)}`)).status).toBe(403);

    // PLATFORM_EGRESS_ALLOW names 127.0.0.2:<allowed>: urllib's HTTP_PROXY request and a CONNECT tunnel reach it.
    const viaProxy = await inside(`/fetch?url=${encodeURIComponent(`http://127.0.0.2:${allowed}/via-proxy`)}`);
    expect(viaProxy).toEqual({ status: 200, body: 'allowed-server /via-proxy' });
    const viaTunnel = await inside(`/tunnel?host=127.0.0.2&port=${allowed}`);
    expect(viaTunnel).toEqual({ status: 200, body: 'allowed-server /through-tunnel' });
  });

  it("the bridge's protocol: OK and a pipe for the platform's ports, ERR with the reason otherwise", async () => {
    const bridge = join(h.home, 'serverless', 'bridge', 'bridge.sock');
    const main = Number(new URL(h.url).port);
    expect(await bridgeSays(bridge, 'garbage\n')).toBe('ERR malformed request: send "<host> <port>"\n');
    expect(await bridgeSays(bridge, `127.0.0.1 ${hostSecret}\n`)).toMatch(/^ERR 127\.0\.0\.1:\d+ is a loopback address of the host/);
    expect(await bridgeSays(bridge, `localhost ${hostSecret}\n`)).toMatch(/^ERR localhost:\d+ is a loopback address/);
    expect(await bridgeSays(bridge, `no-such-host.invalid 80\n`)).toMatch(/^ERR no-such-host\.invalid does not resolve/);
    const ok = await bridgeSays(bridge, `127.0.0.1 ${main}\nGET /v1/x HTTP/1.0\r\n\r\n`);
    expect(ok.startsWith('OK\nHTTP/1.1 404')).toBe(true);
  });

  it('two instances of one revision both listen on PORT 8080 without colliding', async () => {
    const t = template('pair', 1, source(h, { 'main.py': SERVER_PY }));
    h.plane.apply(desired('pair', [t], [{ revision: t.revision, percent: 100 }], { containerConcurrency: 1, maxScale: 2 }));
    await waitReport(h, 'svc-pair', t.revision, 'ready');
    const res = await Promise.all(Array.from({ length: 4 }, () => call(h, hostOf('pair'), '/?ms=500')));
    expect(res.every((r) => r.status === 200)).toBe(true);
    expect(new Set(res.map((r) => r.body.instance)).size).toBe(2);
    expect(new Set(res.map((r) => r.body.port))).toEqual(new Set(['8080']));
    await h.plane.remove('svc-pair');
  });

  it('a container_port below 1024 works for the unprivileged user in its own namespace', async () => {
    const t = template('low', 1, source(h, { 'main.py': SERVER_PY }), { port: 80 });
    h.plane.apply(desired('low', [t], [{ revision: t.revision, percent: 100 }]));
    await waitReport(h, 'svc-low', t.revision, 'ready');
    const r = await call(h, hostOf('low'));
    expect(r.status).toBe(200);
    expect(r.body.port).toBe('80');
    await h.plane.remove('svc-low');
  });

  it('readiness through probe.sock: a server that never listens is ProgressDeadlineExceeded, an early exit ExitCode<N>', async () => {
    const silent = template('late', 1, source(h, { 'main.py': SILENT_PY }));
    const crash = template('late', 2, source(h, { 'main.py': CRASH_PY }));
    h.plane.apply(desired('late', [silent, crash], [{ revision: silent.revision, percent: 50 }, { revision: crash.revision, percent: 50 }]));
    const s = await waitReport(h, 'svc-late', silent.revision, 'not_ready');
    expect(s.reason).toBe('ProgressDeadlineExceeded');
    expect(s.message).toContain('did not listen on port 8080 ($PORT)');
    const c = await waitReport(h, 'svc-late', crash.revision, 'not_ready');
    expect(c.reason).toBe('ExitCode2');
    expect(c.message).toContain('boom: DATABASE_URL is not set');
    await h.plane.remove('svc-late');
  });

  it('--isolation none keeps the host port and says so', async () => {
    const open = await harness({ isolation: 'none', startTimeoutMs: 3000 });
    try {
      const t = template('plain', 1, source(open, { 'main.py': SERVER_PY }));
      open.plane.apply(desired('plain', [t], [{ revision: t.revision, percent: 100 }]));
      const r = await waitReport(open, 'svc-plain', t.revision, 'ready');
      expect(r.network?.isolated).toBe(false);
      expect(r.network?.message).toMatch(/--isolation none: instances listen on a host loopback port/);
      const served = await call(open, hostOf('plain'));
      expect(served.status).toBe(200);
      expect(Number(served.body.port)).not.toBe(8080);
    } finally {
      await open.close();
    }
  });
});

describe('the egress policy', () => {
  const policy = { platformPorts: [7070, 7071], allow: parseEgressAllow('127.0.0.2:9000, [::1]:9001,db.internal:5432') };
  it('lets the daemon ports and the exceptions pass, refuses other loopback, unspecified and link-local addresses', () => {
    expect(egressVerdict('127.0.0.1', '127.0.0.1', 7070, policy).ok).toBe(true);
    expect(egressVerdict('localhost', '::1', 7071, policy).ok).toBe(true);
    expect(egressVerdict('127.0.0.1', '127.0.0.1', 6379, policy).ok).toBe(false);
    expect(egressVerdict('127.0.0.2', '127.0.0.2', 9000, policy).ok).toBe(true);
    expect(egressVerdict('::1', '::1', 9001, policy).ok).toBe(true);
    expect(egressVerdict('db.internal', '127.0.0.9', 5432, policy).ok).toBe(true);
    for (const a of ['127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0.0.0.0', '::', '169.254.169.254', 'fe80::1', 'fd00:ec2::254']) {
      expect(egressVerdict(a, a, 80, policy).ok, a).toBe(false);
    }
    expect(egressVerdict('example.com', '93.184.216.34', 443, policy).ok).toBe(true);
    expect(egressVerdict('example.com', '2606:2800:220:1::248', 443, policy).ok).toBe(true);
    expect(egressVerdict('evil.example', '127.0.0.1', 443, policy)).toEqual({ ok: false, reason: 'evil.example:443 is a loopback address of the host, not the platform\'s API' });
  });
});

const IMAGE = 'platform-python:local';
const dockerWhy = await dockerSkipReason(IMAGE);
if (dockerWhy) console.warn(`SKIPPED: serverless isolation through docker: ${dockerWhy}`);

describe.skipIf(Boolean(dockerWhy))('serverless isolation: the door (docker driver)', { timeout: 120_000 }, () => {
  it('an image runs with no network; its door answers through the daemon only and reaches the platform', async () => {
    // Port 80 as nobody: the namespace's own setting allows it.
    const t = template('boxed', 1, IMAGE, { command: ['python3', '-u', '-c'], args: [PROBE_PY], env: { MARKER }, port: 80 });
    h.plane.apply(desired('boxed', [t], [{ revision: t.revision, percent: 100 }], {}, false));
    const r = await waitReport(h, 'svc-boxed', t.revision, 'ready', 30_000);
    expect(r.network).toEqual({ isolated: true });
    const viaInternal = await fetch(`${h.internalUrl}/services/tstprj/boxed/`);
    expect(((await viaInternal.json()) as any).marker).toBe(MARKER);
    const hits: number[] = [];
    await scanHost(20000, 29999, async (port, sock) => {
      if ((await exchange(sock)).includes(MARKER)) hits.push(port);
    });
    expect(hits).toEqual([]);
    const api = (await (await fetch(`${h.internalUrl}/services/tstprj/boxed/fetch?url=${encodeURIComponent(`${h.url}/v1/nothing`)}`)).json()) as any;
    expect(api.status).toBe(404);
    const refused = (await (await fetch(`${h.internalUrl}/services/tstprj/boxed/direct?host=127.0.0.2&port=${hostSecret}`)).json()) as any;
    expect(refused.connected).toBe(false);
    const viaProxy = (await (await fetch(`${h.internalUrl}/services/tstprj/boxed/fetch?url=${encodeURIComponent(`http://127.0.0.2:${allowed}/img`)}`)).json()) as any;
    expect(viaProxy).toEqual({ status: 200, body: 'allowed-server /img' });
    await h.plane.remove('svc-boxed');
  });
});

describe('a deployed function tries to reach an unpublished service of another project', { timeout: 180_000 }, () => {
  it("every host port of the workload range is closed or a shim answering 403; the marker never comes back; no door in its file system", async () => {
    const own = ownWorkloadPorts();
    const d = await startTestDaemon({ invokeAuthRequired: false, ...own });
    try {
      const c = await cast(d);
      const base = `/v1/projects/${c.project.id}/services`;
      const member = { url: d.url, token: c.member.token };
      const image = await upload(member, c.project.id, { 'main.py': PROBE_PY });
      expect((await api(member, 'POST', base, { name: 'victim', image, env: { MARKER }, scaling: { min_scale: 1 } })).status).toBe(202);
      const token = await d.adminToken();
      expect((await deployForm(d, token, { name: 'scanner', framework: 'function', runtime: 'python' }, archive({ 'main.py': SCAN_FUNCTION_PY }))).status).toBe(202);
      await waitState(d, token, 'scanner', 'ready', '', 170_000);
      await until('victim ready', async () => (await api(member, 'GET', `${base}/victim`)).body.ready === true, 60_000);
      // The victim answers through the router's internal form: it is there to be found.
      expect(((await (await fetch(`http://127.0.0.1:${d.app.ctx.config.internalPort}/services/${c.project.short}/victim/`)).json()) as any).marker).toBe(MARKER);
      // Its sandbox shows the path down to its own revision only: no doors, no bridge.
      const paths = [join(d.home, 'serverless'), join(d.home, 'serverless', 'doors'), join(d.home, 'serverless', 'bridge', 'bridge.sock')];
      for (const p of paths) expect(existsSync(p), p).toBe(true);
      const r = await d.api('POST', '/v1/agents/scanner/invoke', { token, body: { message: JSON.stringify({ lo: 20000, hi: 29999, marker: MARKER, paths }) } });
      expect(r.status, r.text).toBe(200);
      const { answers, marker_ports, visible } = r.body as { answers: Record<string, string>; marker_ports: number[]; visible: string[] };
      console.log(`a function's scan of 20000-29999: ${Object.keys(answers).length} open ports`);
      expect(marker_ports).toEqual([]);
      expect(visible).toEqual([]);
      // This daemon's own window: only workload shims, each refusing a caller without the instance secret.
      const mine = Object.entries(answers).filter(([p]) => Number(p) >= own.workloads!.portMin && Number(p) <= own.workloads!.portMax);
      expect(mine.length).toBeGreaterThan(0);
      for (const [port, status] of mine) expect(status, `port ${port}`).toMatch(/^HTTP\/1\.[01] 403/);
    } finally {
      await d.close();
    }
  });
});

describe('serverless isolation through the real daemon', { timeout: 120_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), 'platform-sl-iso-'));
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  it('VisibilityEnforced is True for isolated instances; kill -9 of the daemon leaves no door or instance process', async () => {
    let d: DaemonProcess & { token: string } = await startDaemon(home, children);
    const project = (await api(d, 'POST', '/v1/projects', { slug: 'iso-proj' })).body.project;
    const base = `/v1/projects/${project.id}/services`;
    const image = await upload(d, project.id, { 'main.py': SERVER_PY });
    expect((await api(d, 'POST', base, { name: 'kept', image, scaling: { min_scale: 1 } })).status).toBe(202);
    // With docker, an image too: its door runs on the host, in the container's namespace.
    if (!dockerWhy) expect((await api(d, 'POST', base, { name: 'boxed', image: IMAGE, command: ['python3', '-u', '-c'], args: [SERVER_PY], scaling: { min_scale: 1 } })).status).toBe(202);
    const names = dockerWhy ? ['kept'] : ['kept', 'boxed'];
    for (const n of names) await until(`${n} ready`, async () => (await api(d, 'GET', `${base}/${n}`)).body.ready === true, 60_000);
    const s = await api(d, 'GET', `${base}/kept`);
    const visibility = s.body.conditions.find((c: any) => c.type === 'VisibilityEnforced');
    expect(visibility).toMatchObject({ status: 'True', reason: 'Private' });
    expect(visibility.message).toContain('own network namespace');

    const doors = () => readdirSync(join(home, 'serverless', 'doors'));
    expect(doors()).toHaveLength(names.length);
    const ledger = () => readdirSync(join(home, 'serverless', 'instances')).map((f) => JSON.parse(readFileSync(join(home, 'serverless', 'instances', f), 'utf8')) as { doorPid?: number; container?: string });
    const doorPids = ledger().flatMap((e) => (e.doorPid ? [e.doorPid] : []));
    expect(doorPids).toHaveLength(names.length - 1);
    const left = [...processesOf(home), ...doorPids];
    expect(left.length).toBeGreaterThan(doorPids.length);
    d.child.kill('SIGKILL');
    await d.exited;
    d = await startDaemon(home, children);
    // The sandbox dies with its parent; the next daemon empties the doors and starts its own.
    await waitFor('the old instance gone', () => left.every((p) => !alive(p)), 10_000);
    for (const n of names) await until(`${n}: a new instance`, async () => (await api(d, 'GET', `${base}/${n}/metrics`)).body.instances?.current === 1, 60_000);
    expect(doors()).toHaveLength(names.length);
    d.child.kill('SIGTERM');
    await d.exited;
    expect(processesOf(home)).toEqual([]);
    expect(doors()).toEqual([]);
    expect(ledger()).toEqual([]);
  });

  it('--isolation none: VisibilityEnforced is False, NetworkNotIsolated, saying why', async () => {
    const open = mkdtempSync(join(tmpdir(), 'platform-sl-iso-none-'));
    try {
      const d = await startDaemon(open, children, { PLATFORM_ISOLATION: 'none' });
      const project = (await api(d, 'POST', '/v1/projects', { slug: 'open-proj' })).body.project;
      const base = `/v1/projects/${project.id}/services`;
      const image = await upload(d, project.id, { 'main.py': SERVER_PY });
      expect((await api(d, 'POST', base, { name: 'plain', image, publish: { enabled: true } })).status).toBe(202);
      await until('ready', async () => (await api(d, 'GET', `${base}/plain`)).body.ready === true, 60_000);
      const visibility = (await api(d, 'GET', `${base}/plain`)).body.conditions.find((c: any) => c.type === 'VisibilityEnforced');
      expect(visibility).toMatchObject({ status: 'False', reason: 'NetworkNotIsolated' });
      expect(visibility.message).toBe('revision plain-00001: the daemon runs with --isolation none: instances listen on a host loopback port that any local process can reach');
      d.child.kill('SIGTERM');
      await d.exited;
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });
});

async function startDaemon(home: string, children: ChildProcess[], env: Record<string, string> = {}): Promise<DaemonProcess & { token: string }> {
  const p = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '60', ...env });
  children.push(p.child);
  return { ...p, token: await loginToken(p.url) };
}

async function api(d: { url: string; token: string }, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(d.url + path, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${d.token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

async function upload(d: { url: string; token: string }, projectId: string, files: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-sl-iso-src-'));
  for (const [p, content] of Object.entries(files)) writeFileSync(join(dir, p), content);
  const chunks: Buffer[] = [];
  for await (const c of tarCreate({ cwd: dir, gzip: true, portable: true }, Object.keys(files))) chunks.push(c as Buffer);
  rmSync(dir, { recursive: true, force: true });
  const r = await fetch(`${d.url}/v1/projects/${projectId}/services/sources`, { method: 'POST', headers: { 'content-type': 'application/gzip', authorization: `Bearer ${d.token}` }, body: new Uint8Array(Buffer.concat(chunks)) });
  expect(r.status).toBeLessThan(300);
  return ((await r.json()) as { image: string }).image;
}

/** Processes whose command line names the state directory (the sandboxes and doors of its instances). */
function processesOf(home: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes(join(home, 'serverless', 'doors')) && !cmd.includes('main.js')) out.push(Number(p));
    } catch {
      // gone
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}

/** Connects to every port in the range on 127.0.0.1 (200 at a time) and hands each open one to `each`. */
async function scanHost(lo: number, hi: number, each: (port: number, sock: ReturnType<typeof connect>) => Promise<void>): Promise<void> {
  let next = lo;
  const worker = async () => {
    while (next <= hi) {
      const port = next++;
      const sock = connect({ port, host: '127.0.0.1' });
      const open = await new Promise<boolean>((r) => {
        sock.setTimeout(500, () => r(false));
        sock.once('connect', () => r(true));
        sock.once('error', () => r(false));
      });
      if (open) await each(port, sock).catch(() => undefined);
      sock.destroy();
    }
  };
  await Promise.all(Array.from({ length: 200 }, worker));
}

/** Writes to the bridge socket and collects the answer until it closes. */
function bridgeSays(path: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(path);
    let said = '';
    s.setTimeout(5000, () => s.destroy());
    s.on('data', (c: Buffer) => (said += c.toString('latin1')));
    s.once('close', () => resolve(said));
    s.once('error', () => undefined);
    s.write(text);
  });
}

/** Sends a bare GET and collects what comes back within a second. */
function exchange(sock: ReturnType<typeof connect>): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    sock.setTimeout(1000, () => resolve(text));
    sock.on('data', (c: Buffer) => (text += c.toString('latin1')));
    sock.once('end', () => resolve(text));
    sock.once('error', () => resolve(text));
    sock.write('GET / HTTP/1.0\r\nHost: x\r\n\r\n');
  });
}

/** Runs Python in the platform's sandbox on the host network, as a function's instance runs. */
function sandboxed(code: string, args: string[]): Promise<{ open: number; marker_ports: number[]; home_visible: boolean }> {
  const { cmd, args: a } = sandboxCommand({ cmd: '/usr/bin/python3', args: ['-c', code, ...args], cwd: '/tmp' });
  return new Promise((resolve, reject) => {
    execFile(cmd, a, { timeout: 60_000, maxBuffer: 1 << 20 }, (err, out, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(JSON.parse(out))));
  });
}

/** Polls an async condition every 50 ms until it holds. */
async function until(what: string, fn: () => Promise<boolean>, ms: number): Promise<void> {
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
    if (await fn().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}
