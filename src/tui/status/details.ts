import type { PaneId, StatusRow } from './model.js';
import type { StatusTarget } from './loaders.js';
import { agentDetails, serviceDetails } from './details/workloads.js';
import { mcpDetails } from './details/mcp.js';
import { triggerDetails } from './details/triggers.js';
import { endpointDetails } from './details/gateway.js';
import { subscriptionDetails, topicDetails } from './details/messaging.js';
import { indexDetails } from './details/indexes.js';
import { cacheDetails } from './details/caches.js';
import { daemonDetails } from './details/daemon.js';

/**
 * What enter shows for a row, one module per kind family (details/*.ts). Each read there fails on
 * its own, as a line inside the details; docs/decisions/status.md "Details of every kind".
 */
export async function detailsFor(t: StatusTarget, pane: PaneId, row: StatusRow): Promise<string[]> {
  switch (pane) {
    case 'workloads':
      return agentDetails(t, row.name);
    case 'services':
      return serviceDetails(t, row.name);
    case 'mcp':
      return mcpDetails(t, row.name);
    case 'triggers':
      return triggerDetails(t, row.name);
    case 'gateway':
      return endpointDetails(t, row.name);
    case 'messaging':
      return row.ref?.type === 'subscription' ? subscriptionDetails(t, row.ref.topic!, row.ref.sub!) : topicDetails(t, row.ref?.topic ?? row.name);
    case 'indexes':
      return indexDetails(t, row.name);
    case 'caches':
      return cacheDetails(t, row.name);
    case 'daemon':
      return daemonDetails(t);
  }
}
