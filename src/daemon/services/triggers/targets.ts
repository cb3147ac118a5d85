import type { AreaContext } from '../../area.js';
import { notFound } from '../../http/errors.js';
import { internalCallHeaders } from '../../internal-call.js';
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
  return { url: `http://127.0.0.1:${ctx.config.port}${suffix}`, host: `${name}-${short}.apps.localhost:${ctx.config.port}`, headers: internalCallHeaders() };
}
