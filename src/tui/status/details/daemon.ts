import { healthRoutes } from '../../../api/health.js';
import { sandboxRoutes } from '../../../api/sandbox.js';
import { ApiClient } from '../../../client/api-client.js';
import { platformHome } from '../../../client/contexts.js';
import { formatUptime } from '../model.js';
import { uptimeOf, type StatusTarget } from '../loaders.js';
import { linesOf, settle } from './read.js';

/**
 * The daemon and its sandbox: address, version, uptime, isolation, state directory, health of its
 * dependencies and the sandbox's warm pool. A remote context knows only what its API says: no
 * state directory, uptime or sandbox listener (it is loopback-only on the daemon's machine).
 */
export async function daemonDetails(t: StatusTarget): Promise<string[]> {
  const local = t.local;
  const [health, uptime, pool] = await Promise.all([
    settle(t.client.call(healthRoutes.healthz)),
    local ? uptimeOf(local.pid) : Promise.resolve(undefined),
    local?.sandbox_url ? settle(new ApiClient(local.sandbox_url).call(sandboxRoutes.pool)) : Promise.resolve(undefined),
  ]);
  const version = health.ok ? health.value.version : local?.version;
  const out = [
    `daemon ${t.client.baseUrl}${local ? ` · pid ${local.pid}` : ' (remote context)'}`,
    `version ${version ?? 'unknown'} · uptime ${formatUptime(uptime)}`,
    `isolation ${local?.isolation ? `${local.isolation}${local.isolation_detail ? `: ${local.isolation_detail}` : ''}` : 'not reported (remote context)'}`,
    `state directory ${local ? platformHome() : 'on the server (remote context)'}`,
    ...(local?.internal_url ? [`internal listener ${local.internal_url}`] : []),
    '',
    ...linesOf('health', health, (h) => {
      const deps = Object.entries(h.dependencies);
      const rec = h.reconciliation;
      return [
        `health ${h.status}${rec ? ` · start ${rec.state} (areas ${rec.areas.started}/${rec.areas.total})` : ''}`,
        ...deps.map(([name, d]) => `  ${name.padEnd(16)} ${d.status}${d.critical ? ' (critical)' : ''}${d.error ? `  ${d.error.split('\n')[0]}` : ''}`),
      ];
    }),
    '',
  ];
  if (!pool) out.push(`sandbox pool: ${local ? 'this daemon has no sandbox listener' : 'not reachable from here (loopback-only on the server)'}`);
  else
    out.push(
      `sandbox ${local!.sandbox_url}`,
      ...linesOf('sandbox pool', pool, (p) => [`sandbox pool ${p.warm}/${p.target} warm · in flight ${p.in_flight} · created ${p.created_total} since start`]),
    );
  return out;
}
