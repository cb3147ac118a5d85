import { agentRoutes } from '../../api/agents.js';
import { serverlessRoutes } from '../../api/serverless.js';
import type { PaneId, StatusRow } from './model.js';
import type { StatusTarget } from './loaders.js';

/** Lines of the build output shown under a failed revision: enough to see the error, not the whole build. */
export const BUILD_TAIL_LINES = 12;

const tail = (text: string, n: number) => text.trimEnd().split('\n').slice(-n);

async function agentDetails(t: StatusTarget, name: string): Promise<string[]> {
  const [a, { revisions }] = await Promise.all([
    t.client.call(agentRoutes.get, { params: { name }, query: { project: t.project } }),
    t.client.call(agentRoutes.revisions, { params: { name }, query: { project: t.project, page_size: 10 } }),
  ]);
  const out = [
    `${a.kind} ${a.name}: ${a.state}${a.ready ? ' (ready)' : ''}`,
    `framework ${a.framework}${a.runtime ? `/${a.runtime}` : ''} · address ${a.public_url}`,
    `traffic ${a.active_traffic.map((x) => `${x.revision_name} ${x.percent}%`).join(', ') || 'none served'}`,
    '',
    'revisions (newest first):',
    ...revisions.map((r) => `  ${r.name}  ${r.state.padEnd(9)} ${r.serving ? `${r.traffic_percent}%`.padStart(4) : '    '}  ${r.reason.padEnd(8)} ${r.created_at.slice(0, 19)}`),
  ];
  const failed = revisions.find((r) => r.state === 'failed');
  if (a.message) out.push('', `last error: ${a.message.split('\n')[0]}`);
  if (failed) {
    out.push('', `build log of ${failed.name} (last ${BUILD_TAIL_LINES} lines):`);
    try {
      const res = await t.client.request('GET', await t.client.pathFor(agentRoutes.buildLog, { name }), { query: { project: t.project, revision: failed.name }, headers: { accept: 'text/plain' } });
      out.push(...tail(await res.text(), BUILD_TAIL_LINES).map((l) => `  ${l}`));
    } catch (e) {
      out.push(`  could not read it: ${(e as Error).message}`);
    }
  }
  return out;
}

async function serviceDetails(t: StatusTarget, name: string): Promise<string[]> {
  const [s, { revisions }] = await Promise.all([
    t.client.call(serverlessRoutes.get, { params: { projectID: t.project, name } }),
    t.client.call(serverlessRoutes.revisions, { params: { projectID: t.project, name } }),
  ]);
  return [
    `service ${s.name}: ${s.state} · image ${s.image}`,
    `address ${s.url} · scaling min ${s.scaling.min_scale} max ${s.scaling.max_scale}`,
    ...(s.message ? [`last error: ${s.message.split('\n')[0]}`] : []),
    '',
    'conditions:',
    ...s.conditions.map((c) => `  ${c.type.padEnd(20)} ${c.status.padEnd(7)} ${c.reason ?? ''}${c.message ? `: ${c.message.split('\n')[0]}` : ''}`),
    '',
    'revisions (newest first):',
    ...revisions.map((r) => `  ${r.name}  ${r.state.padEnd(9)} ${`${r.traffic_percent}%`.padStart(4)} replicas ${r.replicas}${r.message ? `  ${r.message.split('\n')[0]}` : ''}`),
  ];
}

/** What enter shows for a row: revisions, conditions and the last error where the kind has them. */
export async function detailsFor(t: StatusTarget, pane: PaneId, row: StatusRow): Promise<string[]> {
  if (pane === 'workloads') return agentDetails(t, row.name);
  if (pane === 'services') return serviceDetails(t, row.name);
  return [`${row.name}: ${row.state}`, row.summary, ...(row.error ? ['', `last error: ${row.error}`] : [])];
}
