/**
 * What the status dashboard shows: one snapshot of the whole project, a pane per resource kind.
 * Plain data (no React, no client) so the non-TTY table, --json and the ink screen share it.
 */

/** How a row reads at a glance: ok (green), busy (yellow: on its way), bad (red), idle (dim). */
export type Health = 'ok' | 'busy' | 'bad' | 'idle';

export const PANE_IDS = ['workloads', 'services', 'mcp', 'triggers', 'gateway', 'messaging', 'indexes', 'caches', 'daemon'] as const;
export type PaneId = (typeof PANE_IDS)[number];

export const PANE_TITLES: Record<PaneId, string> = {
  workloads: 'agents/functions',
  services: 'services',
  mcp: 'MCP servers',
  triggers: 'triggers',
  gateway: 'gateway',
  messaging: 'topics/subs',
  indexes: 'indexes',
  caches: 'caches',
  daemon: 'daemon/sandbox',
};

export interface StatusRow {
  name: string;
  state: string;
  health: Health;
  /** One line of what matters for this kind (revision and URL, backlog, points, memory...). */
  summary: string;
  /** First line of why it is not well (a failed build, a failed newer revision, a condition). */
  error?: string;
  /** Identifiers actions and details need beyond the name (a subscription's topic, an agent's kind). */
  ref?: Record<string, string>;
}

export interface Pane {
  id: PaneId;
  title: string;
  rows: StatusRow[];
  /** Set when the pane could not be read: the rest of the screen still shows. */
  error?: string;
}

export interface DaemonSummary {
  url: string;
  version?: string;
  uptime_seconds?: number;
  isolation?: string;
}

export interface Snapshot {
  project: string;
  updated_at: string;
  daemon: DaemonSummary;
  panes: Pane[];
}

/**
 * The first line worth reading of a multi-line failure. Build output opens with a header such as
 * "build 1 for hello"; only that header is skipped (a line like "build failed: ..." is the reason).
 */
export function firstLine(message: string): string {
  const lines = message.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => !/^build \d+ for \S+$/.test(l)) ?? lines[0] ?? '';
}

export function formatUptime(seconds: number | undefined): string {
  if (seconds === undefined) return 'unknown';
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d) return `${d}d${h}h`;
  if (h) return `${h}h${m}m`;
  if (m) return `${m}m`;
  return `${Math.floor(seconds)}s`;
}

export function formatBytes(n: number | undefined): string {
  if (n === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i ? v.toFixed(1) : v}${units[i]}`;
}
