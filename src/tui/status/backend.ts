import type { LogSource } from '../logs/LogsView.js';
import type { PaneId, Snapshot, StatusRow } from './model.js';
import type { StatusAction } from './actions.js';
import { loadSnapshot, type StatusTarget } from './loaders.js';
import { detailsFor } from './details.js';
import { actionsFor } from './actions.js';
import { agentLogSource, serviceLogSource } from '../logs/sources.js';

/** Everything the dashboard asks of the outside world; component tests give it fakes. */
export interface StatusBackend {
  load(): Promise<Snapshot>;
  details(pane: PaneId, row: StatusRow): Promise<string[]>;
  actions(pane: PaneId, row: StatusRow): StatusAction[];
  /** The row's logs, or undefined for kinds without logs. */
  logs(pane: PaneId, row: StatusRow): { title: string; source: LogSource } | undefined;
}

export function apiBackend(t: StatusTarget): StatusBackend {
  return {
    load: () => loadSnapshot(t),
    details: (pane, row) => detailsFor(t, pane, row),
    actions: (pane, row) => actionsFor(t, pane, row),
    logs(pane, row) {
      if (pane === 'workloads') return { title: `${row.ref?.kind ?? 'agent'} ${row.name}`, source: agentLogSource(t.client, { name: row.name, project: t.project }) };
      if (pane === 'services') return { title: `service ${row.name}`, source: serviceLogSource(t.client, { name: row.name, project: t.project }) };
      return undefined;
    },
  };
}
