import type { AreaContext } from '../../area.js';
import { ApiError, notFound } from '../../http/errors.js';
import { internalCallHeaders } from '../../internal-call.js';
import type { PushRequest } from '../messaging/cloudevents.js';
import { sendPush, type PushOutcome } from '../messaging/push-delivery.js';
import type { PushTarget } from '../messaging/push-url.js';
import type { TargetKind } from './store.js';

/**
 * Spec 2 §4.4: target.service names a serverless service, function or agent of the trigger's own
 * project, resolved as a serverless service first, then as the plain workload; anything else is
 * 404 (another project's workload included: there is no cross-project field).
 */
export function resolveTarget(ctx: AreaContext, projectId: string, name: string): TargetKind {
  const t = ctx.hooks.triggerTargets;
  if (t?.service?.(projectId, name)) return 'service';
  const w = t?.workload?.(projectId, name);
  if (w) return w;
  throw notFound(`target ${name} not found: no serverless service, function or agent of that name in this project`);
}

/** Spec 2 §4.4: default path / (/invoke for an agent, whose harness serves there). */
export const defaultPath = (kind: TargetKind) => (kind === 'agent' ? '/invoke' : '/');

/**
 * Where a delivery goes: a service's internal address (the serverless data plane on the internal
 * listener, /services/<short>/<name>), or a function's or agent's address on the daemon's
 * Host-routed listener marked as a call from inside the platform (internal-call.ts), as a push
 * delivery reaches it. Both cold-start the target when nothing runs.
 */
export function dispatch(ctx: AreaContext, kind: TargetKind, short: string, name: string, path: string): PushTarget {
  const suffix = path.startsWith('/') ? path : `/${path}`;
  if (kind === 'service') return { url: `http://127.0.0.1:${ctx.config.internalPort}/services/${short}/${name}${suffix === '/' ? '' : suffix}`, headers: {} };
  return { url: `http://127.0.0.1:${ctx.config.port}${suffix}`, host: `${name}-${short}.${ctx.config.appsDomain}:${ctx.config.port}`, headers: internalCallHeaders() };
}

/**
 * One attempt: POSTs to the target and reports the outcome. A function or agent is reached on a
 * leased instance's own loopback port (the lease cold-starts one), as its public route would after
 * the same lease, without a second HTTP hop through the daemon; a service through the data plane's
 * internal address. A lease refused (gone: 404, cannot start: 503) is the attempt's answer.
 */
export async function deliverOnce(
  ctx: AreaContext,
  t: { project_id: string; target_kind: TargetKind; target_service: string; target_path: string },
  short: string,
  req: PushRequest,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<PushOutcome> {
  const lease = ctx.hooks.triggerTargets?.lease;
  if (t.target_kind === 'service' || !lease) return sendPush(dispatch(ctx, t.target_kind, short, t.target_service, t.target_path), req, timeoutMs, signal);
  let l: Awaited<ReturnType<typeof lease>>;
  try {
    l = await lease(t.project_id, t.target_service);
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, status: e.status, error: `status ${e.status}: ${e.message}`.slice(0, 1000) };
    return { ok: false, error: `could not reach ${t.target_service}: ${(e as Error).message}` };
  }
  let status = 502; // no answer: counted as the error it is
  try {
    const path = t.target_path.startsWith('/') ? t.target_path : `/${t.target_path}`;
    const outcome = await sendPush({ url: `http://127.0.0.1:${l.port}${path}`, headers: l.headers }, req, timeoutMs, signal);
    status = outcome.status ?? 502;
    return outcome;
  } finally {
    l.release(status);
  }
}
