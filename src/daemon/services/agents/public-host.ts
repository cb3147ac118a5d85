import { request } from '../../lazy/modules.js';
import type { RequestContext } from '../../http/router.js';
import { ApiError } from '../../http/errors.js';
import { findProject } from '../accounts/access.js';
import { acquire, invokeTarget, pipeUpstream, servingAgent } from './invoke.js';
import { INTERNAL_CALL_HEADER, isInternalCall } from '../../internal-call.js';
import { INSTANCE_SECRET_HEADER } from '../../runtime/instance-secret.js';
import type { Deps } from './service.js';
import type { AgentRow } from './store.js';
import { clampTimeout } from './view.js';
import { observeInvoke } from './invoke-record.js';
import type { AgentConfig } from '../../../api/agents.js';
import { MiB } from '../../../api/contract.js';
import { appsLabel } from '../../public-address.js';

const DROPPED = new Set(['host', 'connection', 'authorization', INTERNAL_CALL_HEADER, INSTANCE_SECRET_HEADER]);

/** `<name>-<project_short>` of `<name>-<project_short>.<apps domain>[:port]`, the public address (DESIGN.md). */
const LABEL_RE = /^([a-z](?:[a-z0-9-]{0,61}[a-z0-9])?)-([a-z][a-z0-9]{5})$/;

export function parsePublicHost(host: string, appsDomain: string): { name: string; short: string } | undefined {
  const label = appsLabel(host, appsDomain);
  const m = label === undefined ? null : LABEL_RE.exec(label);
  return m ? { name: m[1]!.toLowerCase(), short: m[2]!.toLowerCase() } : undefined;
}

/**
 * Serves a request that arrived on a workload's public address: the whole request (method,
 * path, query, headers, body) goes to the workload's own address and the response streams back,
 * so the function contract of spec 1 §4.13 applies as is. The invoke gate applies here too.
 */
export async function servePublic(d: Deps, ctx: RequestContext): Promise<void> {
  const target = parsePublicHost(String(ctx.req.headers.host ?? ''), d.ctx.config.appsDomain)!;
  const project = findProject(d.ctx.db, target.short);
  if (!project || project.short !== target.short) throw new ApiError(404, `no workload answers at ${ctx.req.headers.host}`);
  // A call from inside the platform (a push delivery) reaches the internal address: no invoke gate.
  const internal = isInternalCall(ctx.req);
  const agent = internal ? servingAgent(d, target.name, project.id) : invokeTarget(d, ctx.principal, target.name, project.id);
  await forwardToAgent(d, ctx, agent);
}

/**
 * The gateway's way in (docs/decisions/gateway.md, Targets): the same forwarding as the public
 * address, for an agent of the project named by a gateway endpoint, whose own auth replaced the
 * invoke gate. `kind` must match (an endpoint for a function never reaches an agent of that name).
 */
export async function serveForGateway(d: Deps, ctx: RequestContext, projectId: string, name: string, kind: 'agent' | 'function'): Promise<void> {
  const agent = servingAgent(d, name, projectId);
  if (agent.kind !== kind) throw new ApiError(404, `no ${kind} ${name} in this project`);
  await forwardToAgent(d, ctx, agent);
}

async function forwardToAgent(d: Deps, ctx: RequestContext, agent: AgentRow): Promise<void> {
  // The public address and the gateway are invokes too: the agent's metrics count them like
  // POST /invoke does (issue 23). Their bodies are the workload's own, so no session ids are read.
  observeInvoke(d.ctx, agent, ctx.res);
  const cfg = JSON.parse(agent.config) as AgentConfig;
  const seconds = clampTimeout(cfg.timeout_seconds);
  const startSeconds = Math.min(seconds, clampTimeout(cfg.response_start_seconds ?? seconds));
  const lease = await acquire(d, agent);
  try {
    const headers: Record<string, string | string[]> = {};
    // A client's own instance-secret header is dropped: only the lease's value reaches the instance.
    for (const [k, v] of Object.entries(ctx.req.headers)) if (v !== undefined && !DROPPED.has(k)) headers[k] = v;
    Object.assign(headers, lease.headers);
    const hasBody = ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD';
    let up;
    try {
      up = await request(`http://127.0.0.1:${lease.port}${ctx.req.url ?? '/'}`, {
        method: ctx.req.method as 'GET',
        headers,
        body: hasBody ? ctx.req : undefined,
        headersTimeout: startSeconds * 1000,
        bodyTimeout: seconds * 1000,
      });
    } catch (e) {
      throw new ApiError(502, `workload ${agent.name} failed to answer: ${(e as Error).message}`);
    }
    await pipeUpstream(up, ctx.res, agent.name, 32 * MiB);
  } finally {
    lease.release();
  }
}
