import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ApiClient } from '../../client/api-client.js';
import { agentRoutes } from '../../api/agents.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { mcpRoutes } from '../../api/mcp.js';
import { triggerRoutes } from '../../api/triggers.js';
import { gatewayRoutes } from '../../api/gateway.js';
import { messagingRoutes } from '../../api/messaging.js';
import { vectorRoutes } from '../../api/vector.js';
import { cacheRoutes } from '../../api/cache.js';
import { healthRoutes } from '../../api/health.js';
import { sandboxRoutes, type PoolStats } from '../../api/sandbox.js';
import type { DaemonInfo } from '../../client/local-daemon.js';
import { ApiClient as Client } from '../../client/api-client.js';
import { PANE_IDS, PANE_TITLES, type DaemonSummary, type Pane, type PaneId, type Snapshot, type StatusRow } from './model.js';
import * as rows from './rows.js';

/** Pages through a list route; a project with more than `maxPages` pages shows the first ones. */
async function allPages<T>(page: (token: string | undefined) => Promise<{ items: T[]; next?: string }>, maxPages = 10): Promise<T[]> {
  const out: T[] = [];
  let token: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const p = await page(token);
    out.push(...p.items);
    token = p.next || undefined;
    if (!token) break;
  }
  return out;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/** Where the snapshot reads from: the API, the local daemon's locator (absent on a remote context). */
export interface StatusTarget {
  client: ApiClient;
  project: string;
  local?: DaemonInfo;
}

type PaneLoader = (t: StatusTarget) => Promise<StatusRow[]>;

const PAGE = 200;

const loaders: Record<Exclude<PaneId, 'daemon'>, PaneLoader> = {
  workloads: async ({ client, project }) =>
    (await allPages(async (page_token) => {
      const r = await client.call(agentRoutes.list, { query: { project, page_size: PAGE, page_token } });
      return { items: r.agents, next: r.next_page_token };
    })).map(rows.agentRow),
  services: async ({ client, project }) =>
    (await allPages(async (page_token) => {
      const r = await client.call(serverlessRoutes.list, { params: { projectID: project }, query: { page_size: PAGE, page_token } });
      return { items: r.services, next: r.next_page_token };
    })).map(rows.serviceRow),
  mcp: async ({ client, project }) =>
    (await allPages(async (page_token) => {
      const r = await client.call(mcpRoutes.list, { params: { projectID: project }, query: { page_size: PAGE, page_token } });
      return { items: r.mcpservers, next: r.next_page_token };
    })).map(rows.mcpRow),
  triggers: async ({ client, project }) =>
    (await allPages(async (page_token) => {
      const r = await client.call(triggerRoutes.list, { params: { projectID: project }, query: { page_size: PAGE, page_token } });
      return { items: r.triggers, next: r.next_page_token };
    })).map(rows.triggerRow),
  gateway: async ({ client, project }) =>
    (await allPages(async (page_token) => {
      const r = await client.call(gatewayRoutes.list, { params: { projectID: project }, query: { page_size: PAGE, page_token } });
      return { items: r.endpoints, next: r.next_page_token };
    })).map(rows.endpointRow),
  messaging: async ({ client, project }) => {
    const topics = await allPages(async (page_token) => {
      const r = await client.call(messagingRoutes.listTopics, { params: { projectID: project }, query: { page_size: PAGE, page_token } });
      return { items: r.topics, next: r.next_page_token };
    });
    const subs = await Promise.all(
      topics.map((t) =>
        allPages(async (page_token) => {
          const r = await client.call(messagingRoutes.listSubscriptions, { params: { projectID: project, topic: t.name }, query: { page_size: PAGE, page_token } });
          return { items: r.subscriptions, next: r.next_page_token };
        }),
      ),
    );
    // Each topic followed by its subscriptions, so a backlog reads next to where it comes from.
    return topics.flatMap((t, i) => [rows.topicRow(t), ...subs[i]!.map(rows.subscriptionRow)]);
  },
  indexes: async ({ client, project }) =>
    (await allPages(async (page_token) => {
      const r = await client.call(vectorRoutes.list, { params: { projectID: project }, query: { page_size: PAGE, page_token } });
      return { items: r.indexes, next: r.next_page_token };
    })).map(rows.indexRow),
  caches: async ({ client, project }) => {
    const caches = await allPages(async (page_token) => {
      const r = await client.call(cacheRoutes.list, { params: { projectID: project }, query: { page_size: PAGE, page_token } });
      return { items: r.memorystores, next: r.next_page_token };
    });
    // Live memory and hit rate come from each server; one that does not answer says so on its row.
    const stats = await Promise.all(
      caches.map((c) => (c.ready ? client.call(cacheRoutes.stats, { params: { projectID: project, name: c.name } }).catch(errorText) : Promise.resolve(undefined))),
    );
    return caches.map((c, i) => rows.cacheRow(c, stats[i]));
  },
};

const execFileP = promisify(execFile);

/** Seconds the local daemon has run, from its pid (no API reports it); undefined when unknown. */
export async function uptimeOf(pid: number): Promise<number | undefined> {
  try {
    const { stdout } = await execFileP('ps', ['-o', 'etimes=', '-p', String(pid)], { timeout: 2000 });
    const n = Number(stdout.trim());
    return Number.isFinite(n) && stdout.trim() ? n : undefined;
  } catch {
    return undefined;
  }
}

async function daemonPane(t: StatusTarget): Promise<{ rows: StatusRow[]; daemon: DaemonSummary }> {
  const daemon: DaemonSummary = { url: t.client.baseUrl };
  const [health, uptime, pool] = await Promise.all([
    t.client.call(healthRoutes.healthz).catch(() => undefined),
    t.local ? uptimeOf(t.local.pid) : Promise.resolve(undefined),
    t.local?.sandbox_url
      ? new Client(t.local.sandbox_url).call(sandboxRoutes.pool).then((p): PoolStats | string => p, errorText)
      : Promise.resolve(undefined),
  ]);
  daemon.version = health?.version ?? t.local?.version;
  daemon.uptime_seconds = uptime;
  if (t.local?.isolation) daemon.isolation = `${t.local.isolation}${t.local.isolation_detail ? `: ${t.local.isolation_detail}` : ''}`;
  return { rows: rows.daemonRows(daemon, pool), daemon };
}

/** One snapshot of the whole project; every pane is read in parallel and fails on its own. */
export async function loadSnapshot(t: StatusTarget): Promise<Snapshot> {
  const [daemon, ...results] = await Promise.all([
    daemonPane(t),
    ...PANE_IDS.filter((id): id is Exclude<PaneId, 'daemon'> => id !== 'daemon').map(async (id): Promise<Pane> => {
      try {
        return { id, title: PANE_TITLES[id], rows: await loaders[id](t) };
      } catch (e) {
        return { id, title: PANE_TITLES[id], rows: [], error: errorText(e) };
      }
    }),
  ]);
  return {
    project: t.project,
    updated_at: new Date().toISOString(),
    daemon: daemon.daemon,
    panes: [...results, { id: 'daemon', title: PANE_TITLES.daemon, rows: daemon.rows }],
  };
}
