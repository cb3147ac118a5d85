import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { GATEWAY_KEY_HEADER, GATEWAY_TARGET_KINDS, RATE_UNITS, type Endpoint } from '../api/gateway.js';
import { ApiCallError, UsageError } from './errors.js';

/** Client side of `platform gateway` (spec 2 §4.5): flag parsing, next steps, and the one-request test. */

/** `KIND[/NAME]`: `function/hello`, `serverless/web`, `vectordb`. */
export function parseTarget(text: string): { kind: string; name?: string } {
  const [kind, ...rest] = text.split('/');
  const name = rest.join('/');
  if (!kind || !(GATEWAY_TARGET_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--target ${text}: the kind must be one of ${GATEWAY_TARGET_KINDS.join(', ')}`, 'e.g. --target function/hello or --target vectordb');
  return name ? { kind, name } : { kind };
}

/** `100/minute` (also `100/min`, `5/s`): requests per unit. */
export function parseRate(text: string): { requests: number; unit: (typeof RATE_UNITS)[number] } {
  const m = /^(\d+)\s*\/\s*([a-z]+)$/i.exec(text.trim());
  const unit = m ? RATE_UNITS.find((u) => u === m[2]!.toLowerCase() || u.startsWith(m[2]!.toLowerCase())) : undefined;
  if (!m || !unit || Number(m[1]) < 1) throw new UsageError(`--rate ${text}: expected REQUESTS/UNIT with a unit of ${RATE_UNITS.join(', ')}`, 'e.g. --rate 100/minute');
  return { requests: Number(m[1]), unit };
}

/** Adds the next step a person needs to an API error of a gateway command. */
export function explain(err: unknown, ref: { endpoint?: string }): never {
  if (!(err instanceof ApiCallError)) throw err;
  const e = ref.endpoint ?? 'ENDPOINT';
  const m = err.message.toLowerCase();
  let next = err.next;
  if (err.status === 404) next = /project/.test(m) ? 'check --project (`platform projects list`)' : /target|not found in this project/.test(m) ? 'the target must be a workload of this project (`platform agents list`, `platform services list`)' : 'list the endpoints with `platform gateway endpoints list` (or check --project)';
  else if (err.status === 403) next = 'gateway changes need a project admin: ask one, or check your role with `platform members list`';
  else if (err.status === 400 && /no live key/.test(m)) next = `create a key first: \`platform gateway keys create ${e}\``;
  else if (err.status === 400 && /unclaimed custom hostname/.test(m)) next = 'claim it first: `platform gateway domains claim HOSTNAME`';
  else if (err.status === 409 && /published endpoint/.test(m)) next = 'unpublish the endpoint (`platform gateway endpoints unpublish NAME`) or move it to another hostname first';
  else if (err.status === 409 && /already exists/.test(m)) next = `choose another name, or look at it with \`platform gateway endpoints get ${e}\``;
  throw new ApiCallError(err.status, err.message, err.requestId, err.body, next);
}

export interface GatewayTestResult {
  url: string;
  status: number;
  /** What the gateway decided: `endpoint=…; auth=…; caller=…; target=…` when it let the request through. */
  decision?: string;
  /** The gateway's (or the target's) error message when the answer is not 2xx. */
  error?: string;
  rate_limit?: { limit?: string; remaining?: string; reset?: string; retry_after?: string };
  ms: number;
  body: string;
}

/**
 * Sends one GET to an endpoint's address and reports what came back. A `.localhost` address is
 * the local daemon's own listener with the endpoint's Host header (no resolver needed).
 */
export function testEndpoint(e: Endpoint, apiBaseUrl: string, opts: { key?: string; path?: string; ca?: string } = {}): Promise<GatewayTestResult> {
  const target = new URL(opts.path ?? '/', e.url);
  const local = target.hostname.endsWith('.localhost');
  const base = new URL(apiBaseUrl);
  const connectTo = local ? base : target;
  const send = connectTo.protocol === 'https:' ? httpsRequest : httpRequest;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: connectTo.hostname,
        port: connectTo.port || (connectTo.protocol === 'https:' ? 443 : 80),
        method: 'GET',
        path: `${target.pathname}${target.search}`,
        headers: { host: target.host, ...(opts.key ? { [GATEWAY_KEY_HEADER]: opts.key } : {}) },
        timeout: 30_000,
        // The context's CA (context add --ca-cert) when the request goes to the platform's own listener.
        ...(local && opts.ca ? { ca: opts.ca } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8').slice(0, 4000);
          let error: string | undefined;
          if ((res.statusCode ?? 0) >= 400) {
            try {
              error = (JSON.parse(body) as { error?: string }).error;
            } catch {
              error = body.slice(0, 200);
            }
          }
          const h = res.headers;
          const rate = h['ratelimit-limit'] ? { limit: String(h['ratelimit-limit']), remaining: String(h['ratelimit-remaining']), reset: String(h['ratelimit-reset']), ...(h['retry-after'] ? { retry_after: String(h['retry-after']) } : {}) } : undefined;
          resolve({
            url: target.toString(),
            status: res.statusCode ?? 0,
            ...(h['x-gateway-decision'] ? { decision: String(h['x-gateway-decision']) } : {}),
            ...(error ? { error } : {}),
            ...(rate ? { rate_limit: rate } : {}),
            ms: Math.round((performance.now() - started) * 10) / 10,
            body,
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end();
  });
}
