import { agentRoutes } from '../../api/agents.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { messagingRoutes } from '../../api/messaging.js';
import type { PaneId, StatusRow } from './model.js';
import type { StatusTarget } from './loaders.js';

/** Something a user does to a row from the dashboard, after answering y to `prompt`. */
export interface StatusAction {
  key: string;
  label: string;
  prompt: string;
  /** Calls the API; resolves to the line shown afterwards (rejects with the API's error). */
  run: () => Promise<string>;
}

/** Bounds a purge: 100 pulls of 100 messages; a busier subscription is purged again by pressing x. */
const PURGE_ROUNDS = 100;

async function rollBackAgent(t: StatusTarget, name: string): Promise<string> {
  const { revisions } = await t.client.call(agentRoutes.revisions, { params: { name }, query: { project: t.project, page_size: 50 } });
  const serving = revisions.findIndex((r) => r.serving);
  const target = revisions.slice(serving + 1).find((r) => r.state === 'ready');
  if (serving < 0 || !target) throw new Error(`${name} has no older ready revision to roll back to`);
  await t.client.call(agentRoutes.pin, { params: { name }, query: { project: t.project }, body: { revision_name: target.name } });
  return `${name}: all requests go to ${target.name} (back to the latest with \`platform agents traffic ${name} --latest\`)`;
}

async function rollBackService(t: StatusTarget, name: string): Promise<string> {
  const { revisions } = await t.client.call(serverlessRoutes.revisions, { params: { projectID: t.project, name } });
  const serving = revisions.findIndex((r) => r.traffic_percent > 0);
  const target = revisions.slice(serving + 1).find((r) => r.ready);
  if (serving < 0 || !target) throw new Error(`${name} has no older ready revision to roll back to`);
  await t.client.call(serverlessRoutes.setTraffic, { params: { projectID: t.project, name }, body: { traffic: [{ revision_name: target.name, percent: 100 }] } });
  return `${name}: all requests go to ${target.name}`;
}

async function scaleToZero(t: StatusTarget, name: string): Promise<string> {
  const s = await t.client.call(serverlessRoutes.get, { params: { projectID: t.project, name } });
  if (s.scaling.min_scale === 0) return `${name} already scales to zero when idle (min_scale 0)`;
  await t.client.call(serverlessRoutes.patch, { params: { projectID: t.project, name }, body: { scaling: { min_scale: 0 } } });
  return `${name}: min_scale 0 (was ${s.scaling.min_scale}); idle instances stop after the idle window`;
}

async function purge(t: StatusTarget, topic: string, sub: string): Promise<string> {
  let purged = 0;
  for (let i = 0; i < PURGE_ROUNDS; i++) {
    const r = await t.client.call(messagingRoutes.pull, { params: { projectID: t.project, topic, sub }, body: { max_messages: 100, timeout_ms: 0, auto_ack: true } });
    if (!r.messages.length) break;
    purged += r.messages.length;
  }
  return `${topic}/${sub}: ${purged} message${purged === 1 ? '' : 's'} acknowledged and gone`;
}

/** The actions a row offers; every one goes through the API the commands use. */
export function actionsFor(t: StatusTarget, pane: PaneId, row: StatusRow): StatusAction[] {
  if (pane === 'workloads') {
    const what = `${row.ref?.kind ?? 'agent'} ${row.name}`;
    return [
      {
        key: 'r',
        label: 'redeploy',
        prompt: `redeploy ${what} from its stored source`,
        run: async () => {
          const r = await t.client.call(agentRoutes.redeploy, { params: { name: row.name }, query: { project: t.project }, body: {} });
          return `${what}: redeploy started (build ${r.build_id.slice(0, 8)})`;
        },
      },
      { key: 'b', label: 'roll back', prompt: `roll ${what} back to its previous ready revision`, run: () => rollBackAgent(t, row.name) },
    ];
  }
  if (pane === 'services') {
    return [
      { key: 'b', label: 'roll back', prompt: `roll service ${row.name} back to its previous ready revision`, run: () => rollBackService(t, row.name) },
      { key: 'z', label: 'scale to zero', prompt: `let service ${row.name} scale to zero (min_scale 0)`, run: () => scaleToZero(t, row.name) },
    ];
  }
  if (pane === 'messaging' && row.ref?.type === 'subscription') {
    const { topic, sub } = row.ref as { topic: string; sub: string };
    return [{ key: 'x', label: 'purge', prompt: `purge subscription ${topic}/${sub} (acknowledge every waiting message)`, run: () => purge(t, topic, sub) }];
  }
  return [];
}
