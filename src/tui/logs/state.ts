import { instancesOf, lastFailureStart, LEVEL_FILTERS, matcher, visibleEntries, type Entry } from './filters.js';
import { anchorAt, displayRows, rowIndexOf, windowStart, type DisplayRow } from './layout.js';
import { levelOf } from './levels.js';
import type { Key } from 'ink';
import { keyAction } from './keys.js';
import type { LogsAction, LogsState } from './model.js';
import type { LogLine } from './types.js';

export type { LogsAction, LogsState } from './model.js';

/** Lines kept by default: a few screens of scrollback for hours of a quiet workload, bounded for a noisy one. */
export const DEFAULT_MAX_LINES = 5000;


export function initialState(maxLines = DEFAULT_MAX_LINES): LogsState {
  return { entries: [], nextSeq: 0, maxLines, follow: true, pausedAt: 0, level: 'all', search: '', help: false, backs: 0 };
}


/** The view's rows for a state: what the filters let through, with revision markers. */
export function rowsOf(s: Pick<LogsState, 'entries' | 'level' | 'instance'>): DisplayRow[] {
  return displayRows(visibleEntries(s.entries, s));
}

/** How many visible lines arrived since the pause. */
export function newSincePause(s: LogsState): number {
  if (s.follow) return 0;
  let n = 0;
  for (let i = s.entries.length - 1; i >= 0 && s.entries[i]!.seq >= s.pausedAt; i--) {
    const e = s.entries[i]!;
    if (visibleEntries([e], s).length) n++;
  }
  return n;
}

function append(s: LogsState, lines: LogLine[]): LogsState {
  const entries = s.entries.concat();
  let seq = s.nextSeq;
  for (const line of lines) {
    // The previous line of the same instance, looked for a short way back: stack frames follow their error closely.
    let previous: Entry | undefined;
    for (let i = entries.length - 1; i >= Math.max(0, entries.length - 50); i--) {
      if (entries[i]!.line.instance === line.instance) {
        previous = entries[i];
        break;
      }
    }
    entries.push({ seq: seq++, line, level: levelOf(line, previous) });
  }
  const over = entries.length - s.maxLines;
  const kept = over > 0 ? entries.slice(over) : entries;
  // A pinned current line or instance that fell out of memory is let go.
  const oldest = kept[0]?.seq ?? seq;
  const instance = s.instance && kept.some((e) => e.line.instance === s.instance) ? s.instance : undefined;
  return { ...s, entries: kept, nextSeq: seq, current: s.current !== undefined && s.current >= oldest ? s.current : undefined, instance, error: undefined };
}

/** Pauses with the window where it is now (so the screen does not jump), or keeps the pause. */
function paused(s: LogsState, height: number): LogsState {
  if (!s.follow) return s;
  const rows = rowsOf(s);
  return { ...s, follow: false, top: anchorAt(rows, windowStart(rows, height, undefined)) ?? s.nextSeq, pausedAt: s.nextSeq };
}

const following = (s: LogsState): LogsState => ({ ...s, follow: true, top: undefined, current: undefined });

/** Paused with `seq` in view: left where it is when already on screen, else put a third of the way down. */
function reveal(s: LogsState, seq: number, height: number, atTop = false): LogsState {
  const p = paused(s, height);
  const rows = rowsOf(p);
  const start = windowStart(rows, height, p.top);
  const at = rowIndexOf(rows, seq);
  if (!atTop && at >= start && at < start + height) return { ...p, current: seq };
  const want = atTop ? at : Math.max(0, at - Math.floor(height / 3));
  return { ...p, current: seq, top: anchorAt(rows, want) };
}

/** The entries that match the committed search, in order. */
function matches(s: LogsState): Entry[] {
  const test = matcher(s.search);
  return test ? visibleEntries(s.entries, s).filter((e) => test(e.line)) : [];
}

/** One character of a multi-key read as the key ink would have reported alone. */
function splitKey(ch: string, key: Key): { input: string; key: Key } {
  if (ch === '\r' || ch === '\n') return { input: '', key: { ...key, return: true } };
  if (ch === '\x7f' || ch === '\b') return { input: '', key: { ...key, backspace: true } };
  return { input: ch, key: { ...key, shift: /[A-Z]/.test(ch) } };
}

export function reduce(s: LogsState, a: LogsAction): LogsState {
  switch (a.type) {
    case 'lines':
      return append(s, a.lines);
    case 'reset':
      return { ...initialState(s.maxLines), backs: s.backs };
    case 'error':
      return { ...s, error: a.message };
    case 'togglePause':
      return s.follow ? { ...paused(s, a.height), notice: undefined } : following(s);
    case 'scroll': {
      // Already at the newest line: down has nowhere to go and must not pause the follow.
      if (s.follow && a.delta > 0) return s;
      const p = paused(s, a.height);
      const rows = rowsOf(p);
      const last = Math.max(0, rows.length - a.height);
      const start = Math.max(0, Math.min(last, windowStart(rows, a.height, p.top) + a.delta));
      return { ...p, top: anchorAt(rows, start) ?? p.top };
    }
    case 'home': {
      const p = paused(s, 0);
      return { ...p, top: p.entries[0]?.seq ?? p.top };
    }
    case 'end':
      return following(s);
    case 'searchStart':
      return { ...s, prompt: '', help: false };
    case 'searchEdit':
      return { ...s, prompt: a.text };
    case 'searchCancel':
      return { ...s, prompt: undefined };
    case 'searchCommit': {
      const committed = { ...s, search: s.prompt ?? s.search, prompt: undefined, current: undefined, notice: undefined };
      if (!committed.search) return committed;
      const found = matches(committed);
      if (!found.length) return { ...committed, notice: `no line matches "${committed.search}"` };
      // Following: the newest match (logs are read from the bottom up); paused: the first one from the top of the window.
      if (committed.follow) return reveal(committed, found.at(-1)!.seq, a.height);
      const rows = rowsOf(committed);
      const from = anchorAt(rows, windowStart(rows, a.height, committed.top)) ?? 0;
      return reveal(committed, (found.find((e) => e.seq >= from) ?? found[0]!).seq, a.height);
    }
    case 'nextMatch': {
      if (!s.search) return { ...s, notice: 'no search yet: press / to search' };
      const found = matches(s);
      if (!found.length) return { ...s, notice: `no line matches "${s.search}"` };
      const from = s.current ?? (a.direction > 0 ? -1 : Number.MAX_SAFE_INTEGER);
      let next = a.direction > 0 ? found.find((e) => e.seq > from) : found.findLast((e) => e.seq < from);
      let notice: string | undefined;
      if (!next) {
        next = a.direction > 0 ? found[0]! : found.at(-1)!;
        notice = a.direction > 0 ? 'search wrapped to the oldest match' : 'search wrapped to the newest match';
      }
      return { ...reveal(s, next.seq, a.height), notice };
    }
    case 'cycleLevel': {
      const level = LEVEL_FILTERS[(LEVEL_FILTERS.indexOf(s.level) + 1) % LEVEL_FILTERS.length]!;
      return { ...s, level, notice: undefined };
    }
    case 'cycleInstance': {
      const all = instancesOf(s.entries);
      const i = s.instance ? all.indexOf(s.instance) : -1;
      const instance = i + 1 < all.length ? all[i + 1] : undefined;
      return { ...s, instance, notice: all.length ? undefined : 'no instance has logged yet' };
    }
    case 'jumpToFailure': {
      const failure = lastFailureStart(s.entries, s.instance);
      if (!failure) return { ...s, notice: `no failure among the ${s.entries.length} lines kept` };
      const at = reveal(s, failure.entry.seq, a.height, true);
      const l = failure.entry.line;
      return { ...at, notice: `failure at ${l.ts.slice(11, 19)} in ${l.instance || 'the daemon'} (${failure.lines} line${failure.lines === 1 ? '' : 's'})` };
    }
    case 'toggleHelp':
      return { ...s, help: !s.help };
    case 'back':
      return { ...s, backs: s.backs + 1 };
    case 'key': {
      // Keys that arrive in one read (typed fast, pasted, sent by tmux) come as one string: each is a key.
      const chars = Array.from(a.input);
      if (chars.length > 1 && !a.key.ctrl && !a.key.meta) return chars.reduce((st, ch) => reduce(st, { ...a, ...splitKey(ch, a.key) }), s);
      const action = keyAction(s, a.input, a.key, a.height);
      return action ? reduce(s, action) : s;
    }
  }
}

/** The window of rows to draw for a body `height` rows tall. */
export function windowOf(s: LogsState, height: number): { rows: DisplayRow[]; start: number; total: number } {
  const rows = rowsOf(s);
  const start = windowStart(rows, height, s.follow ? undefined : s.top);
  return { rows: rows.slice(start, start + height), start, total: rows.length };
}

/** Position among the matches of the current line, for the footer ("3/10"). */
export function matchPosition(s: LogsState): { index?: number; count: number } {
  const found = matches(s);
  const i = s.current === undefined ? -1 : found.findIndex((e) => e.seq === s.current);
  return { index: i >= 0 ? i + 1 : undefined, count: found.length };
}
