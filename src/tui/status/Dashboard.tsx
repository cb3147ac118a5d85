import { Box, Text, useApp, useInput, useStdout } from 'ink';
import { useEffect, useMemo, useState } from 'react';
import { LogsView } from '../logs/LogsView.js';
import type { StatusBackend } from './backend.js';
import type { StatusAction } from './actions.js';
import type { Pane, StatusRow } from './model.js';
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
  | { kind: 'details'; title: string; lines?: string[]; error?: string; offset: number }
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
  const read = () => ({ columns: columns ?? stdout.columns ?? 80, rows: rows ?? stdout.rows ?? 24 });
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

/** `platform status` on a terminal: every pane of the project, live, driven from the keyboard. */
export function Dashboard({ backend, intervalMs, color, columns: fixedColumns, rows: fixedRows }: DashboardProps) {
  const { exit } = useApp();
  const { columns, rows: height } = useTerminalSize(fixedColumns, fixedRows);
  const load = useMemo(() => () => backend.load(), [backend]);
  const { snapshot, error, refresh } = useSnapshot(load, intervalMs);
  const [focused, setFocused] = useState(0);
  const [selectedByPane, setSelectedByPane] = useState<Record<string, string>>({});
  const [filter, setFilter] = useState('');
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  const [message, setMessage] = useState<{ text: string; bad: boolean }>();

  const panes: Pane[] = snapshot?.panes ?? [];
  const pane = panes[focused];
  const visible = pane ? pane.rows.filter(matches(filter)) : [];
  // The selection follows the row's name, so a refresh that reorders rows keeps it on the same one.
  const selectedName = pane ? selectedByPane[pane.id] : undefined;
  const selected = Math.max(0, visible.findIndex((r) => r.name === selectedName));
  const row = visible[selected];

  const select = (i: number) => {
    if (!pane || !visible.length) return;
    const next = visible[Math.max(0, Math.min(visible.length - 1, i))]!;
    setSelectedByPane((s) => ({ ...s, [pane.id]: next.name }));
  };
  const focus = (i: number) => {
    if (!panes.length) return;
    setFocused(((i % panes.length) + panes.length) % panes.length);
    setFilter('');
  };

  const openDetails = () => {
    if (!pane || !row) return;
    const title = `${pane.title} ${row.name}`;
    setMode({ kind: 'details', title, offset: 0 });
    backend.details(pane.id, row).then(
      (lines) => setMode((m) => (m.kind === 'details' && m.title === title ? { ...m, lines } : m)),
      (e: Error) => setMode((m) => (m.kind === 'details' && m.title === title ? { ...m, error: e.message } : m)),
    );
  };

  const runAction = (action: StatusAction) => {
    setMode({ kind: 'list' });
    setMessage({ text: `${action.label}: working…`, bad: false });
    action.run().then(
      (text) => {
        setMessage({ text, bad: false });
        refresh();
      },
      (e: Error) => setMessage({ text: `${action.label} failed: ${e.message}`, bad: true }),
    );
  };

  useInput(
    (input, key) => {
      if (mode.kind === 'confirm') {
        if (input === 'y' || input === 'Y') runAction(mode.action);
        else {
          setMode({ kind: 'list' });
          setMessage({ text: `${mode.action.label}: cancelled`, bad: false });
        }
        return;
      }
      if (mode.kind === 'filter') {
        if (key.escape) {
          setFilter('');
          setMode({ kind: 'list' });
        } else if (key.return) setMode({ kind: 'list' });
        else if (key.backspace || key.delete) setFilter((f) => f.slice(0, -1));
        else if (key.upArrow) select(selected - 1);
        else if (key.downArrow) select(selected + 1);
        else if (input && !key.ctrl && !key.meta && !key.tab) setFilter((f) => f + input);
        return;
      }
      if (mode.kind === 'help') {
        if (key.escape || input === '?' || input === 'q') setMode({ kind: 'list' });
        return;
      }
      if (mode.kind === 'details') {
        const max = Math.max(0, (mode.lines?.length ?? 0) - 1);
        if (key.escape || input === 'q' || key.leftArrow) setMode({ kind: 'list' });
        else if (input === 'j' || key.downArrow) setMode({ ...mode, offset: Math.min(max, mode.offset + 1) });
        else if (input === 'k' || key.upArrow) setMode({ ...mode, offset: Math.max(0, mode.offset - 1) });
        else if (key.pageDown || input === ' ') setMode({ ...mode, offset: Math.min(max, mode.offset + 10) });
        else if (key.pageUp) setMode({ ...mode, offset: Math.max(0, mode.offset - 10) });
        return;
      }
      // list
      if (input === 'q') return exit();
      if (key.escape) {
        setFilter('');
        setMessage(undefined);
      } else if (input === 'j' || key.downArrow) select(selected + 1);
      else if (input === 'k' || key.upArrow) select(selected - 1);
      else if (key.pageDown) select(selected + 10);
      else if (key.pageUp) select(selected - 10);
      else if (input === 'g') select(0);
      else if (input === 'G') select(visible.length - 1);
      else if (key.tab && key.shift) focus(focused - 1);
      else if (key.tab) focus(focused + 1);
      else if (/^[1-9]$/.test(input) && Number(input) <= panes.length) focus(Number(input) - 1);
      else if (key.return) openDetails();
      else if (input === '/') {
        setFilter('');
        setMode({ kind: 'filter' });
      } else if (input === '?') setMode({ kind: 'help' });
      else if (input === 'l' && pane && row) {
        const logs = backend.logs(pane.id, row);
        if (logs) setMode({ kind: 'logs', ...logs });
        else setMessage({ text: `${pane.title} have no logs here`, bad: false });
      } else if (pane && row && input) {
        const action = backend.actions(pane.id, row).find((a) => a.key === input);
        if (action) setMode({ kind: 'confirm', action });
      }
    },
    { isActive: mode.kind !== 'logs' },
  );

  // Leaves one line free: a frame as tall as the terminal makes ink clear the whole screen each time.
  const bodyHeight = Math.max(3, height - 3);

  if (mode.kind === 'logs') {
    return <LogsView title={mode.title} source={mode.source} onBack={() => setMode({ kind: 'list' })} rows={height - 1} columns={columns} color={color} />;
  }

  const withSidebar = columns >= SIDEBAR_MIN_COLUMNS;
  const mainWidth = withSidebar ? columns - SIDEBAR_WIDTH - 1 : columns;
  let body;
  if (mode.kind === 'help') body = <HelpView width={mainWidth} height={bodyHeight} color={color} />;
  else if (mode.kind === 'details') body = <DetailsView {...mode} width={mainWidth} height={bodyHeight} color={color} />;
  else if (pane) body = <PaneTable pane={pane} rows={visible} selected={selected} width={mainWidth} height={bodyHeight} color={color} filter={filter} />;
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
