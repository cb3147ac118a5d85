import { Box, Text, useInput } from 'ink';
import { useEffect, useReducer, useRef } from 'react';
import type { LogLine } from '../../api/agents.js';
import { KEY_HELP } from './keys.js';
import { footerText, plural, renderRow, truncate, type RenderedRow } from './render.js';
import { DEFAULT_MAX_LINES, initialState, reduce, windowOf } from './state.js';
import type { LogSource } from './types.js';

export type { LogSource } from './types.js';

export interface LogsViewProps {
  /** What is shown in the title, e.g. "agent hello". */
  title: string;
  /**
   * Keep its identity across renders (create it once, e.g. with useMemo): a new source is another
   * log, so the view starts over with it.
   */
  source: LogSource;
  /** Back to the caller (Escape or q). */
  onBack: () => void;
  rows: number;
  columns: number;
  color: boolean;
  /** Lines kept in memory, oldest dropped first (default 5000). */
  maxLines?: number;
  /** False while another part of the screen owns the keyboard (default true). */
  active?: boolean;
}

/**
 * The logs screen of the dashboard: follows a source (history, then live, across redeploys), with
 * pause and scroll, search, level and instance filters and a jump to the last failure. Draws
 * exactly `rows` rows or fewer, none wider than `columns`; without colour it writes no escape codes.
 */
export function LogsView({ title, source, onBack, rows, columns, color, maxLines = DEFAULT_MAX_LINES, active = true }: LogsViewProps) {
  const [state, dispatch] = useReducer(reduce, maxLines, initialState);
  const height = Math.max(1, rows - 2);

  const subscribed = useRef<LogSource>(undefined);
  useEffect(() => {
    if (subscribed.current && subscribed.current !== source) dispatch({ type: 'reset' });
    subscribed.current = source;
    // Lines that arrive together (a history page, a chunk of the live stream) are applied together.
    let pending: LogLine[] = [];
    let live = true;
    const flush = () => {
      const lines = pending;
      pending = [];
      if (live && lines.length) dispatch({ type: 'lines', lines });
    };
    const stop = source.subscribe(
      (line) => {
        if (pending.push(line) === 1) queueMicrotask(flush);
      },
      (message) => {
        if (live) dispatch({ type: 'error', message });
      },
    );
    return () => {
      live = false;
      stop();
    };
  }, [source]);

  const backs = useRef(0);
  useEffect(() => {
    if (state.backs > backs.current) {
      backs.current = state.backs;
      onBack();
    }
  }, [state.backs, onBack]);

  useInput((input, key) => dispatch({ type: 'key', input, key, height }), { isActive: active });

  const { rows: window } = windowOf(state, height);
  const { status, detail } = footerText(state);
  const heading = `logs: ${title} · ${plural(state.entries.length, 'line')} · ? keys`;
  return (
    <Box flexDirection="column">
      <Text bold={color} wrap="truncate-end">
        {truncate(heading, columns)}
      </Text>
      {state.help
        ? KEY_HELP.slice(0, height).map(([keys, what]) => (
            <Text key={keys} wrap="truncate-end">
              {truncate(`  ${keys.padEnd(11)} ${what}`, columns)}
            </Text>
          ))
        : window.map((row) => <Row key={row.kind === 'line' ? row.entry.seq : `r${row.seq}`} row={renderRow(row, state, columns)} color={color} />)}
      {window.length === 0 && !state.help ? (
        <Text wrap="truncate-end">{truncate(state.entries.length ? '  no line passes the filters (L: level, i: instance)' : '  waiting for the first line…', columns)}</Text>
      ) : null}
      <Footer status={status} detail={detail} paused={!state.follow} error={Boolean(state.error)} columns={columns} color={color} />
    </Box>
  );
}

function Row({ row, color }: { row: RenderedRow; color: boolean }) {
  if (!color) return <Text wrap="truncate-end">{row.segments.map((s) => s.text).join('')}</Text>;
  if (row.kind === 'revision') return <Text wrap="truncate-end" color="cyan" bold>{row.segments[0]!.text}</Text>;
  const tone = row.level === 'error' ? 'red' : row.level === 'warn' ? 'yellow' : undefined;
  return (
    <Text wrap="truncate-end" color={tone} dimColor={!tone && row.system}>
      {row.segments.map((s, i) => (s.match ? <Text key={i} inverse>{s.text}</Text> : s.text))}
    </Text>
  );
}

function Footer({ status, detail, paused, error, columns, color }: { status: string; detail: string; paused: boolean; error: boolean; columns: number; color: boolean }) {
  const text = truncate(detail ? `${status} · ${detail}` : status, columns);
  if (!color) return <Text wrap="truncate-end">{text}</Text>;
  const head = text.slice(0, status.length);
  const rest = text.slice(status.length);
  return (
    <Text wrap="truncate-end">
      <Text color={paused ? 'yellow' : 'green'} bold>
        {head}
      </Text>
      <Text color={error ? 'red' : undefined}>{rest}</Text>
    </Text>
  );
}
