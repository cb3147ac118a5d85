/**
 * Gateway benchmarks (issue 21): requests per second and added p50/p99 latency through a published
 * endpoint (auth none, apikey with a rate limit, jwt) against a raw Node reverse proxy and against
 * the target called directly, in one run, with autocannon. The target is a Node.js function (its
 * shim is fast, so the hops in front of it show): direct is its public address on the daemon;
 * the raw proxy and the gateway both add one hop in front of that same address.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { c as tarCreate } from 'tar';
import { BENCH_ADMIN, ms, startDaemonProcess, stopDaemonProcess, type BenchOptions, type Row } from './lib.js';
import { standaloneOptions } from './options.js';

/** Seconds of each autocannon run, and rounds, each running every path once in a rotated order, so drift (warm-up, other load) hits all alike. */
const loadShape = (opts: BenchOptions) => ({
  seconds: Number(process.env.GATEWAY_BENCH_SECONDS ?? (opts.quick ? 1 : 3)),
  rounds: Number(process.env.GATEWAY_BENCH_ROUNDS ?? (opts.quick ? 1 : 3)),
  // A smoke run measures cold paths rather than spend a second warming each.
  warm: !opts.quick,
});
const CONNECTIONS = Number(process.env.GATEWAY_BENCH_CONNECTIONS ?? 8);
const BODY = '{"message":"x"}';

async function pack(files: Record<string, string>): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-bench-gw-'));
  for (const [p, content] of Object.entries(files)) writeFileSync(join(dir, p), content);
  const chunks: Buffer[] = [];
  for await (const c of tarCreate({ cwd: dir, gzip: true }, Object.keys(files))) chunks.push(c as Buffer);
  rmSync(dir, { recursive: true, force: true });
  return Buffer.concat(chunks);
}

/** The reference: a plain Node reverse proxy with a keep-alive agent, streaming both ways. */
function rawProxy(port: number, targetHost: string): Promise<Server> {
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  const server = createServer((req, res) => {
    const up = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: { ...req.headers, host: targetHost, 'x-forwarded-for': req.socket.remoteAddress ?? '' }, agent }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      res.statusCode = 502;
      res.end();
    });
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, warm: boolean, seconds: number): Promise<Run> {
  const opts = { url, method: 'POST' as const, body: BODY, headers: { 'content-type': 'application/json', ...headers }, connections: CONNECTIONS };
  if (warm) await autocannon({ ...opts, duration: 1 }); // pools, JIT, the instance
  const r = await autocannon({ ...opts, duration: seconds });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts };
}

const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Each path once per round, the order rotated every round; the median of each figure. */
async function interleaved(paths: Array<[string, string, Record<string, string>]>, { seconds, rounds, warm }: ReturnType<typeof loadShape>): Promise<Map<string, Run>> {
  const runs = new Map<string, Run[]>(paths.map(([n]) => [n, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < paths.length; i++) {
      const [name, url, headers] = paths[(i + round) % paths.length]!;
      runs.get(name)!.push(await load(url, headers, warm && round === 0, seconds));
    }
  }
  return new Map([...runs].map(([n, rs]) => [n, { rps: mid(rs.map((r) => r.rps)), p50: mid(rs.map((r) => r.p50)), p99: mid(rs.map((r) => r.p99)), errors: rs.reduce((a, r) => a + r.errors, 0) }]));
}

export async function gatewayBench(opts: BenchOptions = { quick: false }): Promise<Row[]> {
  const shape = loadShape(opts);
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-gateway-'));
  const jwks = createServer();
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  // The daemon fetches a jwks_uri only where its egress policy lets it: a loopback port is an exception to name.
  const jwksAt = `127.0.0.1:${(jwks.address() as AddressInfo).port}`;
  const d = await startDaemonProcess(home, { INVOKE_AUTH_REQUIRED: 'false', PLATFORM_SCALE_TO_ZERO_SECONDS: '3600', PLATFORM_RATE_LIMIT_BURST: '0', PLATFORM_EGRESS_ALLOW: jwksAt });
  let proxy: Server | undefined;
  try {
    const login = (await (await fetch(`${d.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BENCH_ADMIN) })).json()) as { token: string };
    const auth = { authorization: `Bearer ${login.token}` };
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${d.url}${path}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return r.status === 204 ? undefined : ((await r.json()) as any);
    };
    const project = await api('GET', '/v1/projects/default');
    const short = project.short as string;

    const form = new FormData();
    form.append('name', 'echo');
    form.append('framework', 'function');
    form.append('runtime', 'nodejs');
    form.append('code', new Blob([new Uint8Array(await pack({ 'index.mjs': 'export function handle(event) {\n  return { reply: "hello " + event.message };\n}\n' }))]), 'code.tar.gz');
    const dep = await fetch(`${d.url}/v1/agents`, { method: 'POST', body: form, headers: auth });
    if (dep.status !== 202) throw new Error(`deploy: ${dep.status} ${await dep.text()}`);
    for (;;) {
      const a = await api('GET', '/v1/agents/echo');
      if (a.state === 'ready') break;
      if (a.state === 'failed') throw new Error(`deploy failed: ${a.message}`);
      await new Promise((r) => setTimeout(r, 20));
    }

    // A local JWKS server and one token for the jwt endpoint.
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256' };
    jwks.on('request', (_req, res) => res.end(JSON.stringify({ keys: [jwk] })));
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'bench' }).setIssuer('https://bench/').setAudience('bench').setSubject('b').setExpirationTime('1h').sign(privateKey);

    const gw = '/v1/projects/default/gateway/endpoints';
    await api('POST', gw, { name: 'open', target: { kind: 'function', name: 'echo' } });
    await api('POST', gw, { name: 'keyed', target: { kind: 'function', name: 'echo' }, auth: { mode: 'apikey' }, rate_limit: { requests: 1_000_000_000, unit: 'minute', key: 'api_key' } });
    await api('POST', gw, { name: 'signed', target: { kind: 'function', name: 'echo' }, auth: { mode: 'jwt', jwt: { issuer: 'https://bench/', jwks_uri: `http://${jwksAt}/`, audiences: ['bench'] } } });
    const key = (await api('POST', `${gw}/keyed/keys`, {})).secret as string;
    for (const n of ['open', 'keyed', 'signed']) await api('POST', `${gw}/${n}/publish`);

    const port = Number(new URL(d.url).port);
    const appsHost = `echo-${short}.apps.localhost:${port}`;
    proxy = await rawProxy(port, appsHost);
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`;
    const gwHost = (n: string) => `${n}-${short}.gw.localhost:${port}`;

    const m = await interleaved([
      ['direct', `${d.url}/`, { host: appsHost }],
      ['raw', proxyUrl, {}],
      ['none', `${d.url}/`, { host: gwHost('open') }],
      ['keyed', `${d.url}/`, { host: gwHost('keyed'), 'x-api-key': key }],
      ['signed', `${d.url}/`, { host: gwHost('signed'), authorization: `Bearer ${jwt}` }],
    ], shape);
    const [direct, raw, none, keyed, signed] = (['direct', 'raw', 'none', 'keyed', 'signed'] as const).map((n) => m.get(n)!) as [Run, Run, Run, Run, Run];

    const rows: Row[] = [];
    const row = (name: string, r: Run, goal?: string) => {
      rows.push({ bench: 'gateway', metric: `${name}: requests/s (${CONNECTIONS} connections, median of ${shape.rounds} x ${shape.seconds} s)`, value: r.rps.toFixed(0), baseline: `raw proxy ${raw.rps.toFixed(0)}`, ratio: `${((r.rps / raw.rps) * 100).toFixed(0)}% of raw proxy`, goal });
      rows.push({ bench: 'gateway', metric: `${name}: p50 / p99 latency, added over direct`, value: `${ms(r.p50)} / ${ms(r.p99)}`, baseline: `direct ${ms(direct.p50)} / ${ms(direct.p99)}`, ratio: `+${ms(r.p50 - direct.p50)} / +${ms(r.p99 - direct.p99)}`, goal: goal ? '< 1 ms added p50' : undefined });
      if (r.errors) rows.push({ bench: 'gateway', metric: `${name}: non-2xx or failed`, value: String(r.errors) });
    };
    rows.push({ bench: 'gateway', metric: `direct (function public address): requests/s`, value: direct.rps.toFixed(0), baseline: `p50 ${ms(direct.p50)} / p99 ${ms(direct.p99)}` });
    row('raw Node reverse proxy', raw);
    row('gateway, auth none', none);
    row('gateway, apikey + rate limit', keyed, '>= 70% of raw proxy');
    row('gateway, jwt', signed);
    return rows;
  } finally {
    proxy?.close();
    jwks.close();
    await stopDaemonProcess(d.pid);
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./lib.js');
  printTable(await gatewayBench(standaloneOptions()));
}
