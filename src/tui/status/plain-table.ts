import { formatTable } from '../../cli/render.js';
import type { Snapshot, StatusRow } from './model.js';

/**
 * `status` without a terminal (CI, a pipe) or with --once: one plain table of every pane, no
 * colour and no escape codes. A pane that could not be read is one row whose state is "error", an empty one
 * a row whose state is "none".
 */
export function plainTable(s: Snapshot): string {
  const rows: Array<StatusRow & { pane: string }> = [];
  for (const p of s.panes) {
    if (p.error) rows.push({ pane: p.id, name: '-', state: 'error', health: 'bad', summary: '', error: p.error });
    // An empty kind still has its line, so the table says "none" instead of leaving a reader to guess.
    else if (!p.rows.length) rows.push({ pane: p.id, name: '-', state: 'none', health: 'idle', summary: '' });
    for (const r of p.rows) rows.push({ ...r, pane: p.id });
  }
  const table = formatTable(rows, [
    { header: 'kind', get: (r) => r.pane },
    { header: 'name', get: (r) => r.name },
    { header: 'state', get: (r) => r.state },
    // A row in trouble shows why; the others what they serve.
    { header: 'detail', get: (r) => (r.error ? `${r.error}${r.summary ? ` (${r.summary})` : ''}` : r.summary) },
  ]);
  return `project ${s.project} · ${s.daemon.url} · updated ${s.updated_at.slice(11, 19)}\n${table}`;
}
