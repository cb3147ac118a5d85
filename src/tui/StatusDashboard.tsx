import { Box, Text } from 'ink';

export interface StatusRow {
  name: string;
  state: string;
  ready: boolean;
  message?: string;
  detail?: string;
}

export interface StatusSection {
  title: string;
  rows: StatusRow[];
  /** Set when the section could not be read (for example the area answered an error). */
  error?: string;
}

const stateColor = (r: StatusRow) => (r.ready ? 'green' : r.state === 'failed' || r.state === 'degraded' ? 'red' : 'yellow');

/** One frame of the status dashboard: a section per resource kind with state and readiness. */
export function StatusDashboard(props: { project: string; sections: StatusSection[]; updatedAt: string; width?: number }) {
  const nameWidth = Math.max(12, ...props.sections.flatMap((s) => s.rows.map((r) => r.name.length))) + 2;
  return (
    <Box flexDirection="column" width={props.width}>
      <Text bold>
        project {props.project} <Text dimColor>updated {props.updatedAt} · q to quit</Text>
      </Text>
      {props.sections.map((s) => (
        <Box key={s.title} flexDirection="column" marginTop={1}>
          <Text bold underline>
            {s.title} ({s.rows.length})
          </Text>
          {s.error ? <Text color="red">{s.error}</Text> : null}
          {!s.error && s.rows.length === 0 ? <Text dimColor>none</Text> : null}
          {s.rows.map((r) => (
            <Box key={r.name}>
              <Box width={nameWidth}>
                <Text>{r.name}</Text>
              </Box>
              <Box width={12}>
                <Text color={stateColor(r)}>{r.state}</Text>
              </Box>
              <Text dimColor wrap="truncate-end">
                {r.message ?? r.detail ?? ''}
              </Text>
            </Box>
          ))}
        </Box>
      ))}
    </Box>
  );
}
