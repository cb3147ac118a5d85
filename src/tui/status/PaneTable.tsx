import { Box, Text } from 'ink';
import type { Pane, StatusRow } from './model.js';
import { faint, fit, healthStyle, selectedStyle, strong } from './style.js';

const STATE_WIDTH = 11;

/** The first visible row so the selection stays on screen. */
export const windowStart = (selected: number, total: number, height: number) => Math.max(0, Math.min(selected - height + 1, total - height, selected));

/** The focused pane: a title (with its place, "2/9", when the pane list is hidden), column headings and the rows that fit, one line each (never wrapped). */
export function PaneTable(props: { pane: Pane; rows: StatusRow[]; selected: number; width: number; height: number; color: boolean; filter: string; position?: string }) {
  const { pane, rows, selected, width, height, color, filter, position } = props;
  const nameWidth = Math.min(Math.max(4, ...rows.map((r) => r.name.length)), Math.max(8, Math.floor(width * 0.3)));
  const listHeight = Math.max(1, height - 2 - (pane.error ? 1 : 0));
  const start = windowStart(selected, rows.length, listHeight);
  const counted = filter ? `${rows.length} of ${pane.rows.length} matching "${filter}"` : String(pane.rows.length);
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate-end" {...strong(color)}>
        {position ? `${position} ` : ''}
        {pane.title} ({counted})
      </Text>
      <Text wrap="truncate-end" {...faint(color)}>
        {'  '}
        {fit('NAME', nameWidth)} {fit('STATE', STATE_WIDTH)} DETAIL
      </Text>
      {pane.error ? (
        <Text wrap="truncate-end" {...healthStyle(color, 'bad')}>
          {'  '}cannot read {pane.title}: {pane.error}
        </Text>
      ) : null}
      {!pane.error && rows.length === 0 ? <Text wrap="truncate-end" {...faint(color)}>{filter ? '  no row matches the filter' : '  none'}</Text> : null}
      {rows.slice(start, start + listHeight).map((r, i) => {
        const on = start + i === selected;
        return (
          <Text key={r.name} wrap="truncate-end" {...selectedStyle(color, on)}>
            {on ? '> ' : '  '}
            {fit(r.name, nameWidth)} <Text {...healthStyle(color, r.health)}>{fit(r.state, STATE_WIDTH)}</Text> {r.error ? <Text {...healthStyle(color, 'bad')}>{r.error}</Text> : r.summary}
          </Text>
        );
      })}
    </Box>
  );
}
