import type { AreaContext } from '../../area.js';
import type { GaugeSample } from '../../metrics/gauges.js';
import type { AgentRuntime } from './lifecycle.js';

/** Agents and functions by state, and their running instances, for `/metrics`. */
export function agentsMetricsReader(ctx: AreaContext, rt: AgentRuntime) {
  return {
    area: 'agents',
    read(): GaugeSample[] {
      const rows = ctx.db.prepare('SELECT kind, state, COUNT(*) AS n FROM agents_agents GROUP BY kind, state').all() as Array<{ kind: string; state: string; n: number }>;
      const samples: GaugeSample[] = rows.map((r) => ({ name: 'platform_workloads', labels: { kind: r.kind, state: r.state }, value: r.n }));
      const running = rt.supervisor.runningKeys();
      const kinds = new Map<string, number>([['agent', 0], ['function', 0]]);
      if (running.length) {
        const kindOf = ctx.db.prepare('SELECT kind FROM agents_agents WHERE id = ?').pluck();
        for (const id of running) {
          const k = kindOf.get(id) as string | undefined;
          if (k) kinds.set(k, (kinds.get(k) ?? 0) + 1);
        }
      }
      for (const [kind, n] of kinds) samples.push({ name: 'platform_workload_instances', labels: { kind }, value: n });
      return samples;
    },
  };
}
