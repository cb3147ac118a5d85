import { useApp, useInput } from 'ink';
import { useEffect, useState } from 'react';
import type { AgentView } from '../api/agents.js';
import { AgentsStatus } from './AgentsStatus.js';

/** Refreshing dashboard: loads the agents now and every `intervalMs`, quits on q or Escape. */
export function StatusApp({ load, intervalMs }: { load: () => Promise<AgentView[]>; intervalMs: number }) {
  const { exit } = useApp();
  const [state, setState] = useState<{ agents: AgentView[]; updatedAt?: Date; error?: string }>({ agents: [] });
  useInput((input, key) => {
    if (input === 'q' || key.escape) exit();
  });
  useEffect(() => {
    let alive = true;
    const tick = () =>
      load().then(
        (agents) => alive && setState({ agents, updatedAt: new Date() }),
        (e: Error) => alive && setState((s) => ({ ...s, error: e.message })),
      );
    void tick();
    const t = setInterval(tick, intervalMs);
    return () => {
      alive = false;
      clearInterval(t);
    };
  }, [load, intervalMs]);
  return <AgentsStatus {...state} />;
}
