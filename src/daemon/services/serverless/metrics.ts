import type { AreaContext } from '../../area.js';
import type { GaugeSample } from '../../metrics/gauges.js';
import type { DataPlane } from './plane.js';

/** Serverless services by state and their ready instances, for `/metrics`. */
export function serverlessMetricsReader(ctx: AreaContext, plane: () => DataPlane | undefined) {
  return {
    area: 'serverless',
    read(): GaugeSample[] {
      const rows = ctx.db.prepare('SELECT state, COUNT(*) AS n FROM svc_services GROUP BY state').all() as Array<{ state: string; n: number }>;
      const samples: GaugeSample[] = rows.map((r) => ({ name: 'platform_workloads', labels: { kind: 'service', state: r.state }, value: r.n }));
      const p = plane();
      const ids = ctx.db.prepare('SELECT id FROM svc_services').pluck().all() as string[];
      const replicas = p ? ids.reduce((n, id) => n + p.instances(id).reduce((m, i) => m + i.replicas, 0), 0) : 0;
      samples.push({ name: 'platform_workload_instances', labels: { kind: 'service' }, value: replicas });
      return samples;
    },
  };
}
