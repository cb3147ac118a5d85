import type { Key } from 'ink';
import type { LogsAction, LogsState } from './model.js';


/** The key list `?` shows, in the order a user reaches for them. */
export const KEY_HELP: [string, string][] = [
  ['space / p', 'pause or follow again'],
  ['↑ ↓ / k j', 'scroll a line (pauses)'],
  ['PgUp PgDn', 'scroll a page'],
  ['g / G', 'oldest line / newest line and follow'],
  ['/', 'search (Enter to apply, Esc to cancel)'],
  ['n / N', 'next / previous match'],
  ['L', 'level: all, warn+, error+'],
  ['i', 'instance: all, then each one seen'],
  ['f', 'jump to the start of the last failure'],
  ['?', 'this list'],
  ['Esc / q', 'back'],
];

/**
 * What a key does in the logs view. `height` is the body's height (a page). While typing a search
 * every printable key is text; while the key list shows, any key closes it.
 */
export function keyAction(s: LogsState, input: string, key: Key, height: number): LogsAction | undefined {
  if (s.prompt !== undefined) {
    if (key.escape) return { type: 'searchCancel' };
    if (key.return) return { type: 'searchCommit', height };
    if (key.backspace || key.delete) return { type: 'searchEdit', text: s.prompt.slice(0, -1) };
    if (input && !key.ctrl && !key.meta && !/[\x00-\x1f\x7f]/.test(input)) return { type: 'searchEdit', text: s.prompt + input };
    return undefined;
  }
  if (s.help) return { type: 'toggleHelp' };
  if (key.escape || input === 'q') return { type: 'back' };
  if (key.upArrow || input === 'k') return { type: 'scroll', delta: -1, height };
  if (key.downArrow || input === 'j') return { type: 'scroll', delta: 1, height };
  if (key.pageUp || (key.ctrl && input === 'b')) return { type: 'scroll', delta: -Math.max(1, height - 1), height };
  if (key.pageDown || (key.ctrl && input === 'f')) return { type: 'scroll', delta: Math.max(1, height - 1), height };
  if (key.home || input === 'g') return { type: 'home' };
  if (key.end || input === 'G') return { type: 'end' };
  switch (input) {
    case ' ':
    case 'p':
      return { type: 'togglePause', height };
    case '/':
      return { type: 'searchStart' };
    case 'n':
      return { type: 'nextMatch', direction: 1, height };
    case 'N':
      return { type: 'nextMatch', direction: -1, height };
    case 'L':
      return { type: 'cycleLevel' };
    case 'i':
      return { type: 'cycleInstance' };
    case 'f':
      return { type: 'jumpToFailure', height };
    case '?':
      return { type: 'toggleHelp' };
  }
  return undefined;
}
