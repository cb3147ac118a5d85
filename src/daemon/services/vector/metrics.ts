import type { AreaContext } from '../../area.js';
import type { GaugeSample } from '../../metrics/gauges.js';

/** Points per vector index (the counts the index views show, refreshed on their interval), for `/metrics`. */
export function vectorMetricsReader(ctx: AreaContext) {
  return {
    area: 'vector',
    read(): GaugeSample[] {
      const rows = ctx.db
        .prepare(`SELECT p.short AS project, i.name AS name, i.points_count AS points FROM vec_indexes i JOIN acct_projects p ON p.id = i.project_id WHERE i.state <> 'deleting'`)
        .all() as Array<{ project: string; name: string; points: number }>;
      return rows.map((r) => ({ name: 'platform_vector_points', labels: { project: r.project, index: r.name }, value: r.points }));
    },
  };
}
