/** The key list `?` shows (docs/decisions/status.md); one table so help and docs agree. */
export const KEY_HELP: Array<[keys: string, what: string]> = [
  ['↑ ↓  j k', 'move between rows'],
  ['tab  shift-tab', 'next / previous pane'],
  ['1-9', 'jump to a pane'],
  ['enter', 'details: revisions, conditions, last error, build log tail'],
  ['l', 'logs of the row (agents, functions, services)'],
  ['/', 'filter rows by name (esc clears)'],
  ['r', 'redeploy (agents and functions)'],
  ['b', 'roll back to the previous ready revision'],
  ['z', 'scale to zero (services)'],
  ['x', 'purge (subscriptions)'],
  ['?', 'this list'],
  ['esc', 'back / clear the filter'],
  ['q  ctrl-c', 'quit'],
];
