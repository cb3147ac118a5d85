import { Box, Text } from 'ink';
import type { Pane } from './model.js';
import { healthStyle, selectedStyle, fit } from './style.js';

export const SIDEBAR_WIDTH = 26;

/** Every pane with its row count and how many rows are in trouble: the whole project at a glance. */
export function Sidebar({ panes, focused, color }: { panes: Pane[]; focused: number; color: boolean }) {
  return (
    <Box flexDirection="column" width={SIDEBAR_WIDTH} flexShrink={0}>
      {panes.map((p, i) => {
        const bad = p.rows.filter((r) => r.health === 'bad').length;
        const mark = p.error ? 'err' : bad ? `!${bad}` : '';
        const on = i === focused;
        return (
          <Text key={p.id} wrap="truncate-end" {...selectedStyle(color, on)}>
            {on ? '>' : ' '}
            {i + 1} {fit(p.title, 16)}
            {String(p.rows.length).padStart(3)} <Text {...healthStyle(color, mark ? 'bad' : 'ok')}>{mark}</Text>
          </Text>
        );
      })}
    </Box>
  );
}
