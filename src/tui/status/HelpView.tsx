import { Box, Text } from 'ink';
import { KEY_HELP } from './keys.js';
import { strong, faint } from './style.js';

export function HelpView({ width, color }: { width: number; color: boolean }) {
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate-end" {...strong(color)}>
        keys
      </Text>
      {KEY_HELP.map(([k, what]) => (
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
