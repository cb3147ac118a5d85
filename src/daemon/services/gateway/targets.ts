import { GATEWAY_TARGET_KINDS, UNNAMED_TARGET_KINDS, type GatewayTargetKind, type Target } from '../../../api/gateway.js';
import type { AreaContext } from '../../area.js';
import { badRequest, notFound } from '../../http/errors.js';

/**
 * What each kind of target is locally, and how the owning area names it in `nameInUse` (agents:
 * "agent x" or "function x"; serverless: "serverless service x"). A container target is a
 * serverless service (the platform's container runtime); memorystore has no HTTP face.
 */
const HOLDER: Partial<Record<GatewayTargetKind, string>> = {
  agent: 'agent',
  function: 'function',
  serverless: 'serverless service',
  container: 'serverless service',
};

export const MEMORYSTORE_REFUSAL =
  'a memorystore target speaks the cache protocol (RESP over TCP), which an HTTP gateway cannot carry: clients connect to the cache instance address itself (docs/decisions/gateway.md)';

/** Checks a target's shape (400) and that it names a workload of this very project (404 otherwise). */
export function checkTarget(ctx: AreaContext, projectId: string, t: Target): { kind: GatewayTargetKind; name: string } {
  if (!(GATEWAY_TARGET_KINDS as readonly string[]).includes(t.kind)) throw badRequest(`unknown target.kind ${JSON.stringify(t.kind)}: one of ${GATEWAY_TARGET_KINDS.join(', ')}`);
  const kind = t.kind as GatewayTargetKind;
  if (UNNAMED_TARGET_KINDS.includes(kind)) {
    if (t.name) throw badRequest(`target.name: a ${kind} target takes no name (it fronts the project's ${kind === 'vectordb' ? 'vector' : 'messaging'} API)`);
    return { kind, name: '' };
  }
  if (!t.name) throw badRequest(`target.name is required for a ${kind} target`);
  const missing = targetProblem(ctx, projectId, kind, t.name);
  if (missing && kind !== 'memorystore') throw notFound(missing);
  return { kind, name: t.name };
}

/** Why the target cannot be reached now, or undefined when it exists in the project. */
export function targetProblem(ctx: AreaContext, projectId: string, kind: GatewayTargetKind, name: string): string | undefined {
  if (kind === 'memorystore') return MEMORYSTORE_REFUSAL;
  const holder = HOLDER[kind];
  if (!holder) return undefined;
  const held = ctx.hooks.nameInUse.map((f) => f(projectId, name)).find(Boolean);
  return held === `${holder} ${name}` ? undefined : `target ${kind} ${name} not found in this project`;
}
