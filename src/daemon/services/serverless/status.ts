import type { Condition, ConditionType, ServiceState } from '../../../api/serverless.js';
import type { Route } from './plane.js';
import { QUOTA_REASON, type RevisionRow, type StoredSpec } from './store.js';

/**
 * Conditions and the service state derived from what the data plane reported about each
 * revision (docs/decisions/serverless.md, Control plane). Pure: the caller persists the result.
 */

/** Runtime classes this host applies; any other name is reported by RuntimeClassApplied (False). */
export const KNOWN_RUNTIME_CLASSES = ['', 'default', 'runc'];

/** A revision that became ready and since scaled to zero still counts as ready. */
export const isReady = (r: RevisionRow) => r.state === 'ready' || (r.state === 'unknown' && r.ready_at !== null);

/** latest_ready_revision: the newest revision that has been ready (Knative's rule: it never moves back on a later failure). */
export const latestReady = (revs: RevisionRow[]) => revs.find((r) => r.ready_at !== null);

/**
 * The split served: latest_revision targets the latest READY revision (so a broken new revision
 * never takes traffic), or the newest one while none has ever been ready.
 */
export function activeRoutes(spec: StoredSpec, revs: RevisionRow[]): Route[] {
  // With none ready yet, the newest revision that may run (one the quota refused never does).
  const latest = latestReady(revs)?.name ?? (revs.find((r) => r.reason !== QUOTA_REASON) ?? revs[0])?.name;
  return spec.traffic.map((t) => ({ revision: t.latest_revision ? latest! : t.revision_name!, percent: t.percent ?? 0, ...(t.tag !== undefined ? { tag: t.tag } : {}) }));
}

export interface Derived {
  conditions: Array<Omit<Condition, 'last_transition_time'>>;
  state: ServiceState;
  message: string;
  /** The latest created revision has been acted on: observed_generation may catch up. */
  observed: boolean;
}

const cond = (type: ConditionType, status: Condition['status'], reason: string, message = ''): Omit<Condition, 'last_transition_time'> => ({
  type,
  status,
  reason,
  ...(message ? { message } : {}),
});

const why = (r: RevisionRow) => `revision ${r.name} is not ready${r.reason ? ` (${r.reason})` : ''}${r.message ? `: ${r.message}` : ''}`;

export function derive(spec: StoredSpec, revs: RevisionRow[], invalid: string, url: string): Derived {
  const latest = revs[0]!;
  const routes = activeRoutes(spec, revs);
  const byName = new Map(revs.map((r) => [r.name, r]));
  // Revisions that take requests: those with a share; a split of only 0 % tags serves none.
  const serving = [...new Set(routes.filter((r) => r.percent > 0).map((r) => r.revision))].map((n) => byName.get(n)).filter((r): r is RevisionRow => Boolean(r));

  const serviceReady = isReady(latest)
    ? cond('ServiceReady', 'True', 'RevisionReady', `revision ${latest.name} is ready`)
    : latest.state === 'not_ready'
      ? cond('ServiceReady', 'False', latest.reason || 'RevisionFailed', why(latest))
      : cond('ServiceReady', 'Unknown', 'RevisionPending', `waiting for revision ${latest.name} to report`);
  const failedServing = serving.filter((r) => r.state === 'not_ready');
  const traffic = serving.length && serving.every(isReady)
    ? cond('TrafficAccepted', 'True', 'TrafficServed', routes.filter((r) => r.percent > 0).map((r) => `${r.percent}% to ${r.revision}`).join(', '))
    : failedServing.length
      ? cond('TrafficAccepted', 'False', 'RevisionNotReady', failedServing.map(why).join('; '))
      : cond('TrafficAccepted', 'Unknown', 'TrafficPending', 'waiting for the revisions of the split to become ready');
  const exposed = spec.publish.enabled
    ? cond('Exposed', 'True', 'Published', `public address ${url}`)
    : cond('Exposed', 'False', 'NotPublished', 'publish.enabled is false: only internal_url answers');
  const rc = spec.runtime_class_name;
  const runtime = KNOWN_RUNTIME_CLASSES.includes(rc)
    ? cond('RuntimeClassApplied', 'True', rc ? 'RuntimeClassApplied' : 'DefaultRuntime', rc ? `runtime class ${rc}` : 'the default runtime')
    : cond('RuntimeClassApplied', 'False', 'RuntimeClassUnavailable', `runtime class ${rc} is not available on this host; instances run with the default runtime`);
  const visibility = visibilityCondition(spec.publish.enabled, routes, byName);

  let ready: Omit<Condition, 'last_transition_time'>;
  if (invalid) ready = cond('Ready', 'False', 'Invalid', invalid);
  else if (serviceReady.status === 'True' && traffic.status === 'True') ready = cond('Ready', 'True', 'Ready');
  else if (serviceReady.status === 'False') ready = cond('Ready', 'False', serviceReady.reason!, serviceReady.message);
  else if (traffic.status === 'False') ready = cond('Ready', 'False', traffic.reason!, traffic.message);
  else ready = cond('Ready', 'Unknown', serviceReady.status === 'Unknown' ? serviceReady.reason! : traffic.reason!, serviceReady.status === 'Unknown' ? serviceReady.message : traffic.message);

  let state: ServiceState;
  let message = '';
  const someServingReady = serving.some(isReady);
  if (invalid) {
    state = 'invalid';
    message = invalid;
  } else if (ready.status === 'True') {
    state = 'ready';
  } else if (serviceReady.status === 'False' || traffic.status === 'False') {
    state = someServingReady ? 'degraded' : 'not_ready';
    const failed = serviceReady.status === 'False' ? serviceReady.message! : traffic.message!;
    const on = serving.filter(isReady).map((r) => r.name);
    message = someServingReady ? `${failed}; traffic stays on ${on.join(', ')}` : failed;
  } else {
    state = 'pending';
    message = ready.message ?? 'waiting for the data plane to report';
  }
  return {
    conditions: [ready, serviceReady, traffic, exposed, runtime, visibility],
    state,
    message,
    observed: latest.state !== 'unknown' || latest.ready_at !== null,
  };
}

const networkOf = (r: RevisionRow) => (r.network ? (JSON.parse(r.network) as { isolated: boolean; message?: string }) : undefined);

/**
 * VisibilityEnforced (docs/decisions/serverless.md, Isolation): True when every revision with a
 * share or a tag runs its instances in their own network namespace, so only the router reaches
 * them; False (`NetworkNotIsolated`) when one listens on a host port any local process can reach;
 * Unknown until the data plane said.
 */
function visibilityCondition(published: boolean, routes: Route[], byName: Map<string, RevisionRow>): Omit<Condition, 'last_transition_time'> {
  const routed = [...new Set(routes.filter((r) => r.percent > 0 || r.tag).map((r) => r.revision))].map((n) => byName.get(n)).filter((r): r is RevisionRow => Boolean(r));
  const open = routed.filter((r) => networkOf(r)?.isolated === false);
  if (open.length) return cond('VisibilityEnforced', 'False', 'NetworkNotIsolated', open.map((r) => `revision ${r.name}: ${networkOf(r)!.message ?? 'not isolated'}`).join('; '));
  if (!routed.length || routed.some((r) => !networkOf(r))) return cond('VisibilityEnforced', 'Unknown', 'IsolationPending', 'waiting for the data plane to start the revisions of the split');
  const where = published ? 'served on the public and the internal address' : 'served on the internal address only';
  return cond('VisibilityEnforced', 'True', published ? 'Public' : 'Private', `${where}; each instance has its own network namespace`);
}

/** Keeps a condition's last_transition_time while its status is unchanged (Knative's rule). */
export function stampConditions(next: Derived['conditions'], prev: Condition[], now: string): Condition[] {
  return next.map((c) => {
    const old = prev.find((p) => p.type === c.type);
    return { ...c, last_transition_time: old && old.status === c.status ? old.last_transition_time : now };
  });
}
