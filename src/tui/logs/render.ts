import { LEVEL_FILTER_LABEL, matchRanges } from './filters.js';
import type { DisplayRow } from './layout.js';
import type { Level } from './levels.js';
import { matchPosition, newSincePause, type LogsState } from './state.js';

/** A piece of a row with how it is drawn; `match` pieces are a search hit. */
export interface Segment {
  text: string;
  match?: boolean;
}

export interface RenderedRow {
  segments: Segment[];
  kind: 'line' | 'revision';
  level?: Level;
  system?: boolean;
}

/**
 * Terminal control sequences and other control characters a workload printed: drawn as they are
 * they would move the cursor or colour the screen (and break NO_COLOR), so they are taken out; a
 * tab becomes spaces so widths stay countable.
 */
// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
export const sanitize = (text: string) => text.replace(ESCAPES, '').replace(/\t/g, '    ');

/** Cuts a text to `width` columns with an ellipsis; never wraps. Code points, so a surrogate pair is never split. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  return chars.slice(0, Math.max(0, width - 1)).join('') + '…';
}

/** The columns of a line's prefix that fit: gutter always, the time from 36 columns, the instance from 50. */
function prefixOf(row: Extract<DisplayRow, { kind: 'line' }>, s: LogsState, columns: number, isMatch: boolean): string {
  const e = row.entry;
  const mark = e.seq === s.current ? '>' : isMatch ? '*' : ' ';
  const level = e.level === 'error' ? 'E' : e.level === 'warn' ? 'W' : ' ';
  let out = `${mark}${level} `;
  if (columns >= 36) out += `${e.line.ts.slice(11, 19) || '--:--:--'} `;
  if (columns >= 50) out += `${(e.line.instance.match(/[0-9a-f]{6}$/)?.[0] ?? e.line.instance.slice(-6)).padEnd(6)} `;
  return out;
}

/** One body row as segments no wider than `columns`. */
export function renderRow(row: DisplayRow, s: LogsState, columns: number): RenderedRow {
  if (row.kind === 'revision') return { kind: 'revision', segments: [{ text: truncate(`── revision ${row.revision} ──`, columns) }] };
  const message = sanitize(row.entry.line.message);
  const hits = s.search ? matchRanges(message, s.search) : [];
  const prefix = prefixOf(row, s, columns, hits.length > 0);
  const text = truncate(prefix + message, columns);
  const segments: Segment[] = [];
  let at = 0;
  for (const [from, to] of hits.map(([a, b]) => [a + prefix.length, b + prefix.length] as const)) {
    if (from >= text.length) break;
    if (from > at) segments.push({ text: text.slice(at, from) });
    segments.push({ text: text.slice(from, Math.min(to, text.length)), match: true });
    at = Math.min(to, text.length);
  }
  if (at < text.length) segments.push({ text: text.slice(at) });
  return { kind: 'line', segments, level: row.entry.level, system: row.entry.line.stream === 'system' };
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The footer: follow or pause, the filters in force, the search, and a notice or the source's error. */
export function footerText(s: LogsState): { status: string; detail: string } {
  const status = s.follow ? 'following' : `paused — ${plural(newSincePause(s), 'new line')}`;
  const parts: string[] = [];
  if (s.level !== 'all') parts.push(`level ${LEVEL_FILTER_LABEL[s.level]}`);
  if (s.instance) parts.push(`instance ${s.instance}`);
  if (s.prompt !== undefined) parts.push(`/${s.prompt}`);
  else if (s.search) {
    const { index, count } = matchPosition(s);
    parts.push(`/${s.search} ${index ? `${index}/` : ''}${plural(count, 'match').replace('matchs', 'matches')}`);
  }
  if (s.error) parts.push(s.error);
  else if (s.notice) parts.push(s.notice);
  return { status, detail: parts.join(' · ') };
}
