import { Box, Text, useApp, useInput, useStdout, type Key } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { LogsView } from '../logs/LogsView.js';
import type { StatusBackend } from './backend.js';
import type { StatusAction } from './actions.js';
import type { Pane, PaneId, StatusRow } from './model.js';
import { useSnapshot } from './use-snapshot.js';
import { Header } from './Header.js';
import { Sidebar, SIDEBAR_WIDTH } from './Sidebar.js';
import { PaneTable } from './PaneTable.js';
import { DetailsView } from './DetailsView.js';
import { HelpView } from './HelpView.js';
import { faint, healthStyle } from './style.js';

/** Below this width the pane list gives its room to the rows; the focused pane's name stays in its title. */
export const SIDEBAR_MIN_COLUMNS = 70;

type Mode =
  | { kind: 'list' }
  | { kind: 'filter' }
  | { kind: 'help' }
  | { kind: 'details'; title: string; pane: PaneId; row: StatusRow; lines?: string[]; error?: string; offset: number }
  | { kind: 'logs'; title: string; source: import('../logs/LogsView.js').LogSource }
  | { kind: 'confirm'; action: StatusAction };

export interface DashboardProps {
  backend: StatusBackend;
  intervalMs: number;
  color: boolean;
  /** Fixed size (tests); otherwise the terminal's, following resizes. */
  columns?: number;
  rows?: number;
}

function useTerminalSize(columns?: number, rows?: number): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => ({ columns: columns ?? (stdout.columns || 80), rows: rows ?? (stdout.rows || 24) });
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (columns && rows) return;
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => void stdout.off('resize', onResize);
  }, [stdout, columns, rows]);
  return size;
}

const matches = (filter: string) => (r: StatusRow) => !filter || r.name.toLowerCase().includes(filter.toLowerCase());

interface UiState {
  focused: number;
  /** The selected row of each pane, by name, so a refresh that reorders rows keeps it on the same one. */
  selectedByPane: Record<string, string>;
  filter: string;
  mode: Mode;
  message?: { text: string; bad: boolean };
}

/** The rows of the focused pane that pass the filter, and the selected one. */
function view(panes: Pane[], ui: UiState) {
  const pane = panes[ui.focused];
  const visible = pane ? pane.rows.filter(matches(ui.filter)) : [];
  const selected = Math.max(0, visible.findIndex((r) => r.name === (pane ? ui.selectedByPane[pane.id] : undefined)));
  return { pane, visible, selected, row: visible[selected] };
}

/**
 * `platform status` on a terminal: every pane of the project, live, driven from the keyboard.
 * The UI state lives in a ref read and written synchronously by the key handler: keys typed
 * faster than a frame (tab tab tab) each see the previous one's effect, and the handler stays
 * one function so ink never drops a key while re-subscribing it.
 */
export function Dashboard({ backend, intervalMs, color, columns: fixedColumns, rows: fixedRows }: DashboardProps) {
  const { exit } = useApp();
  const { columns, rows: height } = useTerminalSize(fixedColumns, fixedRows);
  const load = useMemo(() => () => backend.load(), [backend]);
  const { snapshot, error, refresh } = useSnapshot(load, intervalMs);
  const [, setFrame] = useState(0);
  const ui = useRef<UiState>({ focused: 0, selectedByPane: {}, filter: '', mode: { kind: 'list' } });
  const panesRef = useRef<Pane[]>([]);
  panesRef.current = snapshot?.panes ?? [];
  const update = (change: Partial<UiState> | ((s: UiState) => Partial<UiState>)) => {
    ui.current = { ...ui.current, ...(typeof change === 'function' ? change(ui.current) : change) };
    setFrame((n) => n + 1);
  };

  const onKey = (input: string, key: Key): void => {
    // Keys typed faster than they are read come as one chunk ("\t\t\t", "jj"): one key each.
    if (input.length > 1 && !input.includes('\x1b')) {
      for (const ch of input) onKey(ch, { ...key, tab: ch === '\t', return: ch === '\r', backspace: ch === '\x7f' });
      return;
    }
    const s = ui.current;
    const panes = panesRef.current;
    const { pane, visible, selected, row } = view(panes, s);
    const select = (i: number) => {
      if (!pane || !visible.length) return;
      const next = visible[Math.max(0, Math.min(visible.length - 1, i))]!;
      update({ selectedByPane: { ...s.selectedByPane, [pane.id]: next.name } });
    };
    const focus = (i: number) => panes.length && update({ focused: ((i % panes.length) + panes.length) % panes.length, filter: '' });
    const mode = s.mode;

    if (mode.kind === 'confirm') {
      if (input === 'y' || input === 'Y') runAction(mode.action);
      else update({ mode: { kind: 'list' }, message: { text: `${mode.action.label}: cancelled`, bad: false } });
      return;
    }
    if (mode.kind === 'filter') {
      if (key.escape) update({ filter: '', mode: { kind: 'list' } });
      else if (key.return) update({ mode: { kind: 'list' } });
      else if (key.backspace || key.delete) update({ filter: s.filter.slice(0, -1) });
      else if (key.upArrow) select(selected - 1);
      else if (key.downArrow) select(selected + 1);
      else if (input && !key.ctrl && !key.meta && !key.tab) update({ filter: s.filter + input });
      return;
    }
    if (mode.kind === 'help') {
      if (key.escape || input === '?' || input === 'q') update({ mode: { kind: 'list' } });
      return;
    }
    if (mode.kind === 'details') {
      const max = Math.max(0, (mode.lines?.length ?? 0) - 1);
      const scroll = (by: number) => update({ mode: { ...mode, offset: Math.max(0, Math.min(max, mode.offset + by)) } });
      if (key.escape || input === 'q' || key.leftArrow) update({ mode: { kind: 'list' } });
      else if (input === 'j' || key.downArrow) scroll(1);
      else if (input === 'k' || key.upArrow) scroll(-1);
      else if (key.pageDown || input === ' ') scroll(10);
      else if (key.pageUp) scroll(-10);
      return;
    }
    if (mode.kind === 'logs') return;
    if (input === 'q') return exit();
    if (key.escape) update({ filter: '', message: undefined });
    else if (input === 'j' || key.downArrow) select(selected + 1);
    else if (input === 'k' || key.upArrow) select(selected - 1);
    else if (key.pageDown) select(selected + 10);
    else if (key.pageUp) select(selected - 10);
    else if (input === 'g') select(0);
    else if (input === 'G') select(visible.length - 1);
    else if (key.tab && key.shift) focus(s.focused - 1);
    else if (key.tab) focus(s.focused + 1);
    else if (/^[1-9]$/.test(input) && Number(input) <= panes.length) focus(Number(input) - 1);
    else if (key.return && pane && row) openDetails(pane, row);
    else if (input === '/') update({ filter: '', mode: { kind: 'filter' } });
    else if (input === '?') update({ mode: { kind: 'help' } });
    else if (input === 'l' && pane && row) {
      const logs = backend.logs(pane.id, row);
      if (logs) update({ mode: { kind: 'logs', ...logs } });
      else update({ message: { text: `${pane.title} have no logs here`, bad: false } });
    } else if (pane && row && input) {
      const action = backend.actions(pane.id, row).find((a) => a.key === input);
      if (action) update({ mode: { kind: 'confirm', action } });
    }
  };

  const openDetails = (pane: Pane, row: StatusRow) => {
    update({ mode: { kind: 'details', title: `${pane.title} ${row.name}`, pane: pane.id, row, offset: 0 } });
    readDetails();
  };

  // One read at a time: a slow daemon is never asked again before it answered, as useSnapshot does.
  const detailsReading = useRef(false);
  const readDetails = () => {
    const open = ui.current.mode;
    if (open.kind !== 'details' || detailsReading.current) return;
    detailsReading.current = true;
    const settle = (found: { lines?: string[]; error?: string }) => {
      detailsReading.current = false;
      update((s) => {
        if (s.mode.kind !== 'details' || s.mode.title !== open.title) return {};
        const lines = found.lines ?? s.mode.lines;
        // A refresh that shortens the lines keeps the view on the screen.
        const offset = Math.min(s.mode.offset, Math.max(0, (lines?.length ?? 1) - 1));
        return { mode: { ...s.mode, lines, error: found.error, offset } };
      });
    };
    backend.details(open.pane, open.row).then(
      (lines) => settle({ lines }),
      (e: Error) => settle({ error: e.message }),
    );
  };
  // Open details follow the dashboard's refresh, as the panes do: a backlog draining or a
  // revision going ready shows without leaving and entering again. A failed re-read keeps the
  // last lines under its error.
  useEffect(() => {
    if (ui.current.mode.kind === 'details' && (ui.current.mode.lines || ui.current.mode.error)) readDetails();
  }, [snapshot]);

  const runAction = (action: StatusAction) => {
    update({ mode: { kind: 'list' }, message: { text: `${action.label}: working…`, bad: false } });
    action.run().then(
      (text) => {
        update({ message: { text, bad: false } });
        refresh();
      },
      (e: Error) => update({ message: { text: `${action.label} failed: ${e.message}`, bad: true } }),
    );
  };

  // One stable handler for ink (see above); it calls the newest onKey.
  const onKeyRef = useRef(onKey);
  onKeyRef.current = onKey;
  const stableOnKey = useCallback((input: string, key: Key) => onKeyRef.current(input, key), []);
  useInput(stableOnKey, { isActive: ui.current.mode.kind !== 'logs' });

  const { mode, filter, message, focused } = ui.current;
  const panes = panesRef.current;
  const { pane, visible, selected, row } = view(panes, ui.current);
  // Leaves one line free: a frame as tall as the terminal makes ink clear the whole screen each time.
  const bodyHeight = Math.max(3, height - 3);

  if (mode.kind === 'logs') {
    return <LogsView title={mode.title} source={mode.source} onBack={() => update({ mode: { kind: 'list' } })} rows={height - 1} columns={columns} color={color} />;
  }

  // Details take the whole width, as k9s' describe: at 80 columns the pane list would leave them 53.
  const withSidebar = columns >= SIDEBAR_MIN_COLUMNS && mode.kind !== 'details';
  const mainWidth = withSidebar ? columns - SIDEBAR_WIDTH - 1 : columns;
  let body;
  if (mode.kind === 'help') body = <HelpView width={mainWidth} height={bodyHeight} color={color} />;
  else if (mode.kind === 'details') body = <DetailsView {...mode} width={mainWidth} height={bodyHeight} color={color} />;
  else if (pane) body = <PaneTable pane={pane} rows={visible} selected={selected} width={mainWidth} height={bodyHeight} color={color} filter={filter} position={withSidebar ? undefined : `${focused + 1}/${panes.length}`} />;
  else body = <Text {...faint(color)}>{error ? `cannot read the project: ${error}` : 'loading…'}</Text>;

  const actionKeys = pane && row ? backend.actions(pane.id, row).map((a) => `${a.key} ${a.label}`) : [];
  let footer;
  if (mode.kind === 'confirm') footer = <Text wrap="truncate-end" {...healthStyle(color, 'busy')}>{`${mode.action.prompt}? [y/N]`}</Text>;
  else if (mode.kind === 'filter') footer = <Text wrap="truncate-end">{`/${filter}`}<Text {...faint(color)}>{'  (enter keeps, esc clears)'}</Text></Text>;
  else if (message) footer = <Text wrap="truncate-end" {...healthStyle(color, message.bad ? 'bad' : 'ok')}>{message.text}</Text>;
  else if (error && snapshot) footer = <Text wrap="truncate-end" {...healthStyle(color, 'bad')}>{`refresh failed: ${error}`}</Text>;
  else footer = <Text wrap="truncate-end" {...faint(color)}>{['? keys', 'tab panes', 'enter details', 'l logs', '/ filter', ...actionKeys, 'q quit'].join(' · ')}</Text>;

  return (
    <Box flexDirection="column" width={columns}>
      <Header snapshot={snapshot} color={color} error={error} />
      <Box height={bodyHeight} overflow="hidden">
        {withSidebar ? <Sidebar panes={panes} focused={focused} color={color} /> : null}
        {withSidebar ? <Box width={1} flexShrink={0} /> : null}
        {body}
      </Box>
      {footer}
    </Box>
  );
}
