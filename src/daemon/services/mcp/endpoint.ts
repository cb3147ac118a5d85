import { MiB } from '../../../api/contract.js';
import { ApiError } from '../../http/errors.js';
import { readBody } from '../../http/body.js';
import type { RequestContext } from '../../http/router.js';
import { request } from '../../lazy/modules.js';
import { INSTANCE_SECRET_HEADER } from '../../runtime/instance-secret.js';
import { INTERNAL_CALL_HEADER } from '../../internal-call.js';
import { pipeUpstream } from '../agents/invoke.js';
import { bearerMatches } from './credentials.js';
import { upstreamError } from './rpc.js';
import type { Deps } from './service.js';
import { mcpStore } from './store.js';

/** `/mcp/<project_short>/<server>/mcp`: the protocol endpoint (url + /mcp). */
const ENDPOINT_RE = /^\/mcp\/([a-z][a-z0-9]{5})\/([a-z](?:[a-z0-9-]{0,38}[a-z0-9])?)\/mcp\/?$/;
const DROPPED = new Set(['host', 'connection', 'keep-alive', INSTANCE_SECRET_HEADER, INTERNAL_CALL_HEADER]);
/** Answers larger than this are cut (a tools/list of many tools is far below it). */
const UPSTREAM_CAP = 32 * MiB;
/** Bodies up to this with a declared length travel in one piece (a JSON-RPC call is a few hundred bytes). */
const WHOLE_BODY = 1024 * 1024;
/** Past the runtime's own request timeout, so a hung tool is answered by the runtime as a tool error first. */
const GRACE_SECONDS = 5;

export const isMcpPath = (path: string) => path.startsWith('/mcp/');

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

const notServed = (path: string) => new ApiError(404, `no MCP server answers at ${path.slice(0, 200)}`);

/**
 * The protocol endpoint (spec 2 §4.2): the server's bearer is checked here, before an instance is
 * woken, then the request streams to the serving version's instance with the lease's
 * instance-secret header and its answer (JSON or an SSE event) streams back. A private server is
 * served only on the internal listener; on the main listener its path is a 404 as if absent.
 */
export async function serveEndpoint(d: Deps, c: RequestContext, internal: boolean): Promise<void> {
  const path = new URL(c.req.url ?? '/', 'http://localhost').pathname;
  const m = ENDPOINT_RE.exec(path);
  if (!m) throw notServed(path);
  const server = mcpStore.byShort(d.ctx.db, m[1]!, m[2]!);
  if (!server || (!internal && server.expose !== 'apps')) throw notServed(path);
  if (!bearerMatches(d.ctx.db, server, c.req.headers.authorization)) {
    throw new ApiError(401, `this MCP server requires its bearer token: send Authorization: Bearer <the server's svc_mcp_ token> (agents receive it in MCP_SERVERS)`, {
      'WWW-Authenticate': 'Bearer realm="mcp"',
    });
  }
  if (server.serving_version === null) {
    throw new ApiError(503, `MCP server ${server.name} has no ready version yet (state ${server.state}${server.message ? `: ${server.message.slice(0, 300)}` : ''})`, { 'Retry-After': '2' });
  }
  const seconds = d.ctx.config.mcpRequestTimeoutSeconds;
  const lease = await d.rt.lease(server);
  try {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(c.req.headers)) if (v !== undefined && !DROPPED.has(k)) headers[k] = v;
    Object.assign(headers, lease.headers);
    const method = c.req.method ?? 'POST';
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'DELETE';
    // A small body with a declared length is read whole and sent in one write: piping a stream
    // costs more than the call itself on a warm path. Larger or chunked bodies stream.
    const declared = Number(c.req.headers['content-length']);
    const body = !hasBody ? undefined : Number.isFinite(declared) && declared <= WHOLE_BODY ? await readBody(c.req, WHOLE_BODY) : c.req;
    let up;
    try {
      up = await request(`http://127.0.0.1:${lease.port}/mcp`, {
        method: method as 'POST',
        headers,
        body,
        headersTimeout: (seconds + GRACE_SECONDS) * 1000,
        bodyTimeout: (seconds + GRACE_SECONDS) * 1000,
      });
    } catch (e) {
      throw upstreamError(e, `MCP server ${server.name}`, seconds);
    }
    const length = Number(up.headers['content-length']);
    if (Number.isFinite(length) && length <= WHOLE_BODY) {
      // A JSON answer of known length: one write. SSE streams and unknown lengths stream through.
      let answer: Buffer;
      try {
        answer = Buffer.from(await up.body.arrayBuffer());
      } catch (e) {
        throw upstreamError(e, `MCP server ${server.name}`, seconds);
      }
      c.res.statusCode = up.statusCode;
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) c.res.setHeader(k, v);
      c.res.end(answer);
      return;
    }
    await pipeUpstream(up, c.res, `MCP server ${server.name}`, UPSTREAM_CAP);
  } finally {
    lease.release();
  }
}
