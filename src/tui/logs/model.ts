import type { Key } from 'ink';
import type { Entry, LevelFilter } from './filters.js';
import type { LogLine } from './types.js';

/** The logs view's state and the actions its reducer takes (src/tui/logs/state.ts). */
export interface LogsState {
  entries: Entry[];
  nextSeq: number;
  maxLines: number;
  /** Following the newest line; false while paused (scrolled, searched or jumped). */
  follow: boolean;
  /** While paused: the entry seq the window starts at. */
  top?: number;
  /** While paused: the first seq that arrived after the pause (the "N new lines" count). */
  pausedAt: number;
  level: LevelFilter;
  instance?: string;
  /** The committed search. */
  search: string;
  /** The search being typed after `/`; undefined when not typing. */
  prompt?: string;
  /** The line a search or a jump landed on, marked in the gutter. */
  current?: number;
  help: boolean;
  /** A one-off message for the footer (no match, no failure, the source's last error). */
  notice?: string;
  error?: string;
  /** Counts the requests to leave the view (Esc, q): the component calls onBack when it grows. */
  backs: number;
}

export type LogsAction =
  | { type: 'lines'; lines: LogLine[] }
  /** Another source: its lines are another log, so nothing of the previous one is kept. */
  | { type: 'reset' }
  | { type: 'error'; message: string }
  | { type: 'togglePause'; height: number }
  | { type: 'scroll'; delta: number; height: number }
  | { type: 'home' }
  | { type: 'end' }
  | { type: 'searchStart' }
  | { type: 'searchEdit'; text: string }
  | { type: 'searchCommit'; height: number }
  | { type: 'searchCancel' }
  | { type: 'nextMatch'; direction: 1 | -1; height: number }
  | { type: 'cycleLevel' }
  | { type: 'cycleInstance' }
  | { type: 'jumpToFailure'; height: number }
  | { type: 'toggleHelp' }
  | { type: 'back' }
  /** A key press, resolved against the state it arrives in (two keys in one tick see each other's effect). */
  | { type: 'key'; input: string; key: Key; height: number };
