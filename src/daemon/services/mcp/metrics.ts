import type { AreaContext } from '../../area.js';
import type { GaugeSample } from '../../metrics/gauges.js';

/** MCP servers by state and their running instances, for `/metrics`. */
export function mcpMetricsReader(ctx: AreaContext) {
  return {
    area: 'mcp',
    read(): GaugeSample[] {
      const rows = ctx.db.prepare('SELECT state, COUNT(*) AS n FROM mcp_servers GROUP BY state').all() as Array<{ state: string; n: number }>;
      const instances = ctx.db.prepare('SELECT COUNT(*) FROM mcp_instances').pluck().get() as number;
      return [
        ...rows.map((r): GaugeSample => ({ name: 'platform_workloads', labels: { kind: 'mcp', state: r.state }, value: r.n })),
        { name: 'platform_workload_instances', labels: { kind: 'mcp' }, value: instances },
      ];
    },
  };
}
