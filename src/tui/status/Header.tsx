import { Text } from 'ink';
import { formatUptime, type Snapshot } from './model.js';
import { strong, faint } from './style.js';

/** The top line: project, daemon address, uptime, isolation and the time of the last refresh. */
export function Header({ snapshot, color, error }: { snapshot?: Snapshot; color: boolean; error?: string }) {
  if (!snapshot) return <Text wrap="truncate-end">{error ? `platform status · cannot read the project: ${error}` : 'platform status · loading…'}</Text>;
  const d = snapshot.daemon;
  const isolation = d.isolation ? d.isolation.split(':')[0] : 'unknown';
  return (
    <Text wrap="truncate-end">
      <Text {...strong(color)}>platform status</Text> · project {snapshot.project} · {d.url} · up {formatUptime(d.uptime_seconds)} · isolation {isolation}{' '}
      <Text {...faint(color)}>· {snapshot.updated_at.slice(11, 19)}</Text>
    </Text>
  );
}
