import { agentRoutes, type AgentTrafficTarget, type ServedTraffic } from '../api/agents.js';
import type { ApiClient } from './api-client.js';
import { UsageError } from './errors.js';
import { revisionName, trafficFrom } from './services.js';

/**
 * `platform agents traffic` without oclif: show the split, replace it (`--to`, the syntax of
 * `platform services traffic`) or pin one revision (`--pin`). REV is `latest`, a revision name
 * or its number.
 */
export interface AgentTrafficOptions {
  name: string;
  query: { project?: string };
  to?: string[];
  pin?: string;
}

export interface AgentTraffic {
  agent: string;
  traffic: AgentTrafficTarget[];
  active_traffic: ServedTraffic[];
}

export async function agentTraffic(client: ApiClient, o: AgentTrafficOptions): Promise<AgentTraffic> {
  const params = { name: o.name };
  if (o.to?.length && o.pin) throw new UsageError('give --to or --pin, not both', '--pin REV sends every request to REV; --to REV=PERCENT (repeatable) gives the whole split');
  if (o.pin) {
    const ref = o.pin === 'latest' || o.pin === '@latest' ? undefined : revisionName(o.name, o.pin);
    const body = ref ? { revision_name: ref } : { latest_revision: true };
    const a = await client.call(agentRoutes.pin, { params, query: o.query, body });
    return { agent: a.name, traffic: a.traffic, active_traffic: a.active_traffic };
  }
  if (o.to?.length) {
    const traffic = trafficFrom(o.name, o.to).map(({ tag: _none, ...t }) => t);
    const a = await client.call(agentRoutes.setTraffic, { params, query: o.query, body: { traffic } });
    return { agent: a.name, traffic: a.traffic, active_traffic: a.active_traffic };
  }
  return client.call(agentRoutes.trafficGet, { params, query: o.query });
}

/** `tr-00001 50%, latest 50%`: the split as set, on one line. */
export const requestedSplit = (traffic: AgentTrafficTarget[]) => traffic.map((t) => `${t.latest_revision ? 'latest' : t.revision_name} ${t.percent ?? 0}%`).join(', ');
