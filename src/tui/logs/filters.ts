import { LEVEL_RANK, type Level } from './levels.js';
import type { LogLine } from './types.js';

/** One kept line with its arrival number (stable across trimming) and derived level. */
export interface Entry {
  seq: number;
  line: LogLine;
  level: Level;
}

export const LEVEL_FILTERS = ['all', 'warn', 'error'] as const;
export type LevelFilter = (typeof LEVEL_FILTERS)[number];
export const LEVEL_FILTER_LABEL: Record<LevelFilter, string> = { all: 'all', warn: 'warn+', error: 'error+' };

export interface Filters {
  level: LevelFilter;
  /** Only this instance's lines; undefined for all. */
  instance?: string;
}

export const passesLevel = (level: Level, filter: LevelFilter) => filter === 'all' || LEVEL_RANK[level] >= LEVEL_RANK[filter];

/** The entries the filters let through, in order. */
export function visibleEntries(entries: readonly Entry[], f: Filters): Entry[] {
  if (f.level === 'all' && !f.instance) return entries as Entry[];
  return entries.filter((e) => passesLevel(e.level, f.level) && (!f.instance || e.line.instance === f.instance));
}

/**
 * Whether a line matches a search: smart case as in vim and less -i (a query with a capital
 * letter is exact about case, an all-lowercase one is not), over the message only: the instance
 * (which holds the workload's name, so would match every line) has its own filter.
 */
export function matcher(query: string): ((l: LogLine) => boolean) | undefined {
  if (!query) return undefined;
  const exact = query !== query.toLowerCase();
  const q = exact ? query : query.toLowerCase();
  return (l) => (exact ? l.message : l.message.toLowerCase()).includes(q);
}

/** Where a query occurs in a text, as [start, end) ranges, with the same smart case. */
export function matchRanges(text: string, query: string): [number, number][] {
  if (!query) return [];
  const exact = query !== query.toLowerCase();
  const hay = exact ? text : text.toLowerCase();
  const needle = exact ? query : query.toLowerCase();
  const out: [number, number][] = [];
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) out.push([i, i + needle.length]);
  return out;
}

/** The instances among the kept lines, in the order they first appear (the daemon's notes have none). */
export function instancesOf(entries: readonly Entry[]): string[] {
  const seen = new Set<string>();
  for (const e of entries) if (e.line.instance) seen.add(e.line.instance);
  return [...seen];
}

/**
 * The first line of the last failure: the newest error line, then back over the lines of the same
 * instance that are errors too (a traceback's frames, the crash line after it), so the jump lands
 * where the failure starts rather than where it ends. Other instances' lines in between are
 * stepped over, not counted as the end of the burst.
 */
export function lastFailureStart(entries: readonly Entry[], instance?: string): { entry: Entry; lines: number } | undefined {
  let i = entries.length - 1;
  while (i >= 0 && (entries[i]!.level !== 'error' || (instance && entries[i]!.line.instance !== instance))) i--;
  if (i < 0) return undefined;
  const inst = entries[i]!.line.instance;
  let start = i;
  let lines = 1;
  for (let j = i - 1; j >= 0; j--) {
    const e = entries[j]!;
    if (e.line.instance !== inst) continue;
    if (e.level !== 'error') break;
    start = j;
    lines++;
  }
  return { entry: entries[start]!, lines };
}
