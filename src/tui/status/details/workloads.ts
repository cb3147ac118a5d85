import { agentRoutes } from '../../../api/agents.js';
import { serverlessRoutes } from '../../../api/serverless.js';
import type { StatusTarget } from '../loaders.js';
import { linesOf, oneLine, settle } from './read.js';

/** Lines of the build output shown under a failed revision: enough to see the error, not the whole build. */
export const BUILD_TAIL_LINES = 12;

const tail = (text: string, n: number) => text.trimEnd().split('\n').slice(-n);

/** Agents and functions: state, address, traffic, revisions, last error and the build log tail of the newest failed revision. */
export async function agentDetails(t: StatusTarget, name: string): Promise<string[]> {
  const [agent, revs] = await Promise.all([
    settle(t.client.call(agentRoutes.get, { params: { name }, query: { project: t.project } })),
    settle(t.client.call(agentRoutes.revisions, { params: { name }, query: { project: t.project, page_size: 10 } })),
  ]);
  const out = [
    ...linesOf(name, agent, (a) => [
      `${a.kind} ${a.name}: ${a.state}${a.ready ? ' (ready)' : ''}`,
      `framework ${a.framework}${a.runtime ? `/${a.runtime}` : ''} · address ${a.public_url}`,
      `traffic ${a.active_traffic.map((x) => `${x.revision_name} ${x.percent}%`).join(', ') || 'none served'}`,
    ]),
    '',
    'revisions (newest first):',
    ...linesOf('  revisions', revs, ({ revisions }) =>
      revisions.map((r) => `  ${r.name}  ${r.state.padEnd(9)} ${r.serving ? `${r.traffic_percent}%`.padStart(4) : '    '}  ${r.reason.padEnd(8)} ${r.created_at.slice(0, 19)}`),
    ),
  ];
  if (agent.ok && agent.value.message) out.push('', `last error: ${oneLine(agent.value.message)}`);
  const failed = revs.ok ? revs.value.revisions.find((r) => r.state === 'failed') : undefined;
  if (failed) {
    out.push('', `build log of ${failed.name} (last ${BUILD_TAIL_LINES} lines):`);
    const log = await settle(
      t.client
        .pathFor(agentRoutes.buildLog, { name })
        .then((path) => t.client.request('GET', path, { query: { project: t.project, revision: failed.name }, headers: { accept: 'text/plain' } }))
        .then((res) => res.text()),
    );
    out.push(...linesOf('  build log', log, (text) => tail(text, BUILD_TAIL_LINES).map((l) => `  ${l}`)));
  }
  return out;
}

/** Services: state, image, address, scaling, conditions and revisions with their traffic. */
export async function serviceDetails(t: StatusTarget, name: string): Promise<string[]> {
  const [service, revs] = await Promise.all([
    settle(t.client.call(serverlessRoutes.get, { params: { projectID: t.project, name } })),
    settle(t.client.call(serverlessRoutes.revisions, { params: { projectID: t.project, name } })),
  ]);
  return [
    ...linesOf(`service ${name}`, service, (s) => [
      `service ${s.name}: ${s.state} · image ${s.image}`,
      `address ${s.url} · scaling min ${s.scaling.min_scale} max ${s.scaling.max_scale}`,
      ...(s.message ? [`last error: ${oneLine(s.message)}`] : []),
      '',
      'conditions:',
      ...s.conditions.map((c) => `  ${c.type.padEnd(20)} ${c.status.padEnd(7)} ${c.reason ?? ''}${c.message ? `: ${oneLine(c.message)}` : ''}`),
    ]),
    '',
    'revisions (newest first):',
    ...linesOf('  revisions', revs, ({ revisions }) =>
      revisions.map((r) => `  ${r.name}  ${r.state.padEnd(9)} ${`${r.traffic_percent}%`.padStart(4)} replicas ${r.replicas}${r.message ? `  ${oneLine(r.message)}` : ''}`),
    ),
  ];
}
