import { Box, Text } from 'ink';
import { KEY_HELP } from './keys.js';
import { strong, faint } from './style.js';

/** The key list, cut to the screen's height (a fixed-height box would squeeze lines onto each other). */
export function HelpView({ width, height, color }: { width: number; height: number; color: boolean }) {
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate-end" {...strong(color)}>
        keys
      </Text>
      {KEY_HELP.slice(0, Math.max(1, height - 2)).map(([k, what]) => (
        <Text key={k} wrap="truncate-end">
          {'  '}
          {k.padEnd(16)} {what}
        </Text>
      ))}
      <Text wrap="truncate-end" {...faint(color)}>
        esc or ? closes this list
      </Text>
    </Box>
  );
}
