import { Box, Text } from 'ink';
import type { AgentView } from '../api/agents.js';

const COLORS: Record<string, string> = { ready: 'green', failed: 'red', building: 'yellow', deploying: 'cyan' };

export interface AgentsStatusProps {
  agents: AgentView[];
  updatedAt?: Date;
  error?: string;
}

const firstLine = (message: string) => message.split('\n').find((l) => l.trim() && !l.startsWith('build ')) ?? message.split('\n')[0];

/** One frame of `platform status`: agents with their states, newest refresh time, last error. */
export function AgentsStatus({ agents, updatedAt, error }: AgentsStatusProps) {
  const width = Math.max(4, ...agents.map((a) => a.name.length));
  return (
    <Box flexDirection="column">
      <Text bold>
        {'NAME'.padEnd(width)}  {'STATE'.padEnd(9)}  {'REVISION'.padEnd(width + 6)}  URL
      </Text>
      {agents.length === 0 ? <Text dimColor>no agents yet: deploy one with `platform deploy`</Text> : null}
      {agents.map((a) => {
        // A newer revision that failed while an older one serves: ready, with the failure beneath.
        const newerFailed = a.state === 'ready' && a.serving_revision && a.latest_revision && a.serving_revision !== a.latest_revision;
        return (
          <Box key={`${a.project_id}/${a.name}`} flexDirection="column">
            <Text>
              {a.name.padEnd(width)}  <Text color={COLORS[a.state]}>{a.state.padEnd(9)}</Text>  {(a.serving_revision ?? a.latest_revision ?? '-').padEnd(width + 6)}  {a.public_url}
            </Text>
            {a.state === 'failed' && a.message ? <Text color="red">  {firstLine(a.message)}</Text> : null}
            {newerFailed ? <Text color="yellow">  {firstLine(a.message ?? `revision ${a.latest_revision} failed`)}</Text> : null}
          </Box>
        );
      })}
      {error ? <Text color="red">refresh failed: {error}</Text> : null}
      {updatedAt ? <Text dimColor>updated {updatedAt.toISOString().slice(11, 19)} · q to quit</Text> : null}
    </Box>
  );
}
