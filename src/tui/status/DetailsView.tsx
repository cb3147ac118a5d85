import { Box, Text } from 'ink';
import { strong, healthStyle, faint } from './style.js';

/** What enter opens: the lines details.ts reads, scrolled by `offset`, cut to the screen. */
export function DetailsView(props: { title: string; lines?: string[]; error?: string; offset: number; width: number; height: number; color: boolean }) {
  const { title, lines, error, offset, width, height, color } = props;
  const body = Math.max(1, height - 2);
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate-end" {...strong(color)}>
        details: {title}
      </Text>
      {error ? <Text wrap="truncate-end" {...healthStyle(color, 'bad')}>cannot read details: {error}</Text> : null}
      {!lines && !error ? <Text {...faint(color)}>loading…</Text> : null}
      {(lines ?? []).slice(offset, offset + body).map((l, i) => (
        <Text key={offset + i} wrap="truncate-end">
          {l || ' '}
        </Text>
      ))}
      <Text wrap="truncate-end" {...faint(color)}>
        j/k scroll · esc back
      </Text>
    </Box>
  );
}
