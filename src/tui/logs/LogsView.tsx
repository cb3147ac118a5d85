import { Box, Text, useInput } from 'ink';
import { useEffect, useState } from 'react';
import type { LogLine } from '../../api/agents.js';

/** Where a logs view reads from: a workload's lines, oldest first, then new ones as they come. */
export interface LogSource {
  /** Calls onLine for every line (history first, then live, across redeploys) until the returned stop is called. */
  subscribe(onLine: (line: LogLine) => void, onError: (message: string) => void): () => void;
}

export interface LogsViewProps {
  /** What is shown in the title, e.g. "agent hello". */
  title: string;
  source: LogSource;
  /** Back to the caller (Escape or q). */
  onBack: () => void;
  rows: number;
  columns: number;
  color: boolean;
}

/**
 * The logs screen of the dashboard. This first cut follows a source and goes back on Escape/q;
 * pause, search, filters and jump-to-failure are built on this same contract.
 */
export function LogsView({ title, source, onBack, rows, columns, color }: LogsViewProps) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => source.subscribe((l) => setLines((xs) => [...xs.slice(-999), l]), setError), [source]);
  useInput((input, key) => {
    if (input === 'q' || key.escape) onBack();
  });
  const visible = lines.slice(-Math.max(1, rows - 2));
  return (
    <Box flexDirection="column">
      <Text bold={color}>{`logs: ${title}`.slice(0, columns)}</Text>
      {visible.map((l, i) => (
        <Text key={i} wrap="truncate-end">{`${l.revision} ${l.message}`}</Text>
      ))}
      {error ? <Text color={color ? 'red' : undefined}>{error.slice(0, columns)}</Text> : null}
    </Box>
  );
}
