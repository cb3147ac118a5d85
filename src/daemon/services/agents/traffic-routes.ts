import { agentRoutes, type AgentTrafficTarget, type AgentView } from '../../../api/agents.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { badRequest, conflict } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { tx } from '../../store/db.js';
import { checkTraffic } from '../../traffic/check.js';
import type { Principal } from '../auth/principal.js';
import { ownedAgent, unknownAgent } from './access.js';
import { view, type Deps } from './service.js';
import { agentStore } from './store.js';
import { servedTraffic, splitOf, storedSplit } from './traffic.js';

/**
 * The traffic routes of spec 1 §4.12 ("GET and POST /v1/agents/{name}/revisions and
 * /set-traffic", bodies not shown; docs/decisions/agents-traffic.md): POST revisions pins one
 * revision (or returns to the latest), GET and POST set-traffic read and replace the whole split.
 * Owner rights as every per-agent route.
 */
export function registerTrafficRoutes(r: Router, d: Deps): void {
  r.handle(agentRoutes.trafficGet, ({ principal, params, query }) => {
    const { agent } = ownedAgent(d.ctx, principal!, params.name, query.project);
    return { agent: agent.name, traffic: splitOf(agent), active_traffic: servedTraffic(agent) };
  });
  r.handle(agentRoutes.setTraffic, ({ principal, params, query, body, requestId }) => {
    if (body.traffic === undefined) throw badRequest('traffic is required: send the complete split, for example {"traffic":[{"latest_revision":true,"percent":100}]}');
    return setTraffic(d, principal!, params.name, query.project, body.traffic, requestId);
  });
  r.handle(agentRoutes.pin, ({ principal, params, query, body, requestId }) => {
    const named = body.revision_name !== undefined && body.revision_name !== '';
    const latest = body.latest_revision === true;
    if (named === latest) throw badRequest('give revision_name (the revision that takes every request) or latest_revision true (follow every new revision), not both');
    const { agent } = ownedAgent(d.ctx, principal!, params.name, query.project);
    if (named && !agentStore.revisionByName(d.ctx.db, agent.id, body.revision_name!)) {
      throw badRequest(`revision_name: unknown revision ${body.revision_name} of agent ${agent.name} (GET /v1/agents/${agent.name}/revisions lists them)`);
    }
    const target: AgentTrafficTarget = named ? { revision_name: body.revision_name!, percent: 100 } : { latest_revision: true, percent: 100 };
    return setTraffic(d, principal!, params.name, query.project, [target], requestId);
  });
}

/**
 * Replaces the split in one transaction: the services' rules (sum 100, duplicates, unknown
 * revisions; the same messages), then every named revision must be able to serve: a failed one
 * never can (400), a deploying one not yet (409). Routing follows from the next request; the
 * revisions with a share start in the background.
 */
function setTraffic(d: Deps, principal: Principal, name: string, projectRef: string | undefined, targets: AgentTrafficTarget[], requestId: string): AgentView {
  const { db, clock } = d.ctx;
  const { agent, access } = ownedAgent(d.ctx, principal, name, projectRef);
  const changed = tx(db, () => {
    const now = agentStore.byId(db, agent.id);
    if (!now) throw unknownAgent(name);
    const split = checkTraffic(targets, name, (r) => agentStore.revisionByName(db, agent.id, r) !== undefined) as AgentTrafficTarget[];
    split.forEach((t, i) => {
      if (t.revision_name === undefined) return;
      const rev = agentStore.revisionByName(db, agent.id, t.revision_name)!;
      const at = `traffic validation: traffic[${i}]`;
      if (rev.state === 'failed' || !rev.artifact) throw badRequest(`${at}: revision ${rev.name} failed and cannot take traffic (${rev.message.split('\n')[0]})`);
      if (rev.state === 'deploying') throw conflict(`${at}: revision ${rev.name} is still deploying; set the split once it is ready`);
    });
    const stored = storedSplit(split);
    if (stored === (now.traffic ?? null)) return false;
    agentStore.update(db, agent.id, { traffic: stored }, isoNow(clock));
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'agent.traffic.set', target: name, details: { traffic: split }, requestId });
    return true;
  });
  if (changed) d.rt.applyTraffic(agent.id).catch((e: Error) => d.ctx.log.warn('applying a traffic split failed', { agent: name, error: e.message }));
  return view(d, agentStore.byId(db, agent.id)!);
}
