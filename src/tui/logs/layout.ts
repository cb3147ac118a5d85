import type { Entry } from './filters.js';

/** A row of the body: a log line, or the marker put before the first line of another revision. */
export type DisplayRow = { kind: 'line'; entry: Entry } | { kind: 'revision'; revision: string; seq: number };

/**
 * The body's rows for the visible entries: a revision marker wherever the revision differs from
 * the previous line's (the first one included, so the screen always says which revision it shows).
 * The daemon's own notes carry no revision and neither start nor break a run.
 */
export function displayRows(visible: readonly Entry[]): DisplayRow[] {
  const rows: DisplayRow[] = [];
  let revision = '';
  for (const e of visible) {
    if (e.line.revision && e.line.revision !== revision) {
      revision = e.line.revision;
      rows.push({ kind: 'revision', revision, seq: e.seq });
    }
    rows.push({ kind: 'line', entry: e });
  }
  return rows;
}

/** The row index where a window anchored on entry `seq` starts: its marker when it has one. */
export function rowIndexOf(rows: readonly DisplayRow[], seq: number): number {
  // Rows are in seq order; a binary search keeps scrolling cheap on a full buffer.
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (seqOf(rows[mid]!) < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const seqOf = (r: DisplayRow) => (r.kind === 'line' ? r.entry.seq : r.seq);

/** The entry seq a window starting at row `index` is anchored on (a marker anchors on its line). */
export function anchorAt(rows: readonly DisplayRow[], index: number): number | undefined {
  const r = rows[index];
  return r ? seqOf(r) : undefined;
}

/** The first row shown: the newest page when following, else the anchor, never past the last full page. */
export function windowStart(rows: readonly DisplayRow[], height: number, top: number | undefined): number {
  const last = Math.max(0, rows.length - height);
  if (top === undefined) return last;
  return Math.min(rowIndexOf(rows, top), last);
}
