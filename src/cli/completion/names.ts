import { join } from 'node:path';
import type { ApiClient } from '../../client/api-client.js';
import { getContext, platformHome, readContexts } from '../../client/contexts.js';
import { findDaemon } from '../../client/local-daemon.js';
import type { RouteContract } from '../../api/contract.js';
import type { NameLookup, Scope } from './candidates.js';
import { NameCache } from './name-cache.js';
import type { ResourceKind } from './resources.js';

/**
 * The whole look-up, daemon discovery included, gives up after this: a TAB must not hang.
 * PLATFORM_COMPLETION_BUDGET_MS raises it on a machine too slow for it (and in the tests, whose
 * machine runs many daemons at once).
 */
export const completionBudgetMs = () => Number(process.env.PLATFORM_COMPLETION_BUDGET_MS) || 900;

/** One page of the largest size every list allows; a project with more offers the first ones. */
const PAGE = 200;

interface ListSpec {
  /** Loaded only for the kind asked for: each API module builds its schemas when imported. */
  route: () => Promise<RouteContract>;
  /** Path parameters from the project reference (and the topic, for subscriptions). */
  params?: (project: string, client: ApiClient, topic?: string) => Promise<Record<string, string>>;
  /** The agents list takes the project as a query parameter, and picks one itself without. */
  projectInQuery?: boolean;
  /** The item field shown to the user: a project is named by its slug, the rest by name. */
  field?: string;
}

const inProject = async (project: string) => ({ projectID: project });

const LISTS: Record<Exclude<ResourceKind, 'context'>, ListSpec> = {
  agent: { route: async () => (await import('../../api/agents.js')).agentRoutes.list, projectInQuery: true },
  topic: { route: async () => (await import('../../api/messaging.js')).messagingRoutes.listTopics, params: inProject },
  subscription: {
    route: async () => (await import('../../api/messaging.js')).messagingRoutes.listSubscriptions,
    params: async (project, _c, topic) => ({ projectID: project, topic: topic! }),
  },
  // The vector routes take only a project id, not a slug (as `indexes list` resolves it).
  index: { route: async () => (await import('../../api/vector.js')).vectorRoutes.list, params: async (project, client) => ({ projectID: await client.projectId(project) }) },
  'mcp-server': { route: async () => (await import('../../api/mcp.js')).mcpRoutes.list, params: inProject },
  service: { route: async () => (await import('../../api/serverless.js')).serverlessRoutes.list, params: inProject },
  cache: { route: async () => (await import('../../api/cache.js')).cacheRoutes.list, params: inProject },
  trigger: { route: async () => (await import('../../api/triggers.js')).triggerRoutes.list, params: inProject },
  project: { route: async () => (await import('../../api/projects.js')).projectRoutes.list, field: 'slug' },
};

/**
 * Names from one list page. Lists answer `{<plural>: [...], next_page_token}`; the one array is
 * taken whatever its key, so renaming a list's key (`memorystores`) cannot silently empty it.
 */
function namesOf(page: unknown, field: string): string[] {
  const items = Object.values(page as Record<string, unknown>).find(Array.isArray) as Record<string, unknown>[] | undefined;
  return (items ?? []).map((i) => i[field]).filter((n): n is string => typeof n === 'string');
}

async function fetchNames(kind: Exclude<ResourceKind, 'context'>, scope: Required<Pick<Scope, 'context'>> & Scope, project: string | undefined): Promise<string[] | undefined> {
  const spec = LISTS[kind];
  // No local daemon: answer before loading the session code (most of a TAB's start-up otherwise).
  if (getContext(scope.context).kind === 'local' && !process.env.PLATFORM_API_URL && !(await findDaemon())) return undefined;
  // Loaded only on a cache miss with a server to ask.
  const { connect } = await import('../../client/session.js');
  const { client } = await connect({ context: scope.context, startDaemon: false });
  const route = await spec.route();
  if (spec.params && !project) return undefined;
  const params = spec.params ? await spec.params(project!, client, scope.topic) : {};
  const query = { page_size: PAGE, ...(spec.projectInQuery && project ? { project } : {}) };
  const page = await client.call(route, { params, query });
  return namesOf(page, spec.field ?? 'name');
}

/**
 * Looks names up for completion: from the cache while it is fresh, else from the context's
 * server, never starting the local daemon and giving up at the deadline. Every failure (no
 * daemon, signed out, a slow server) is an empty list: a completion prints no errors.
 */
export function daemonNames(opts: { cache?: NameCache; deadline?: number } = {}): NameLookup {
  const cache = opts.cache ?? new NameCache(join(platformHome(), 'cache', 'completion'));
  const deadline = opts.deadline ?? Date.now() + completionBudgetMs();
  return async (kind, scope) => {
    try {
      if (kind === 'context') return readContexts().contexts.map((c) => c.name);
      const context = getContext(scope.context);
      // The project the command itself would use: agents let the server choose when none is set.
      const project = scope.project ?? context.project ?? (context.kind === 'local' && kind !== 'agent' ? 'default' : undefined);
      const cacheProject = kind === 'project' ? '' : (project ?? '');
      const key = scope.topic ? `${kind}:${scope.topic}` : kind;
      const cached = cache.get(context.name, cacheProject, key);
      if (cached) return cached;
      const left = deadline - Date.now();
      if (left <= 0) return [];
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), left);
        timer.unref();
      });
      const names = await Promise.race([fetchNames(kind, { ...scope, context: context.name }, project), late]).finally(() => clearTimeout(timer));
      // Only an answer is kept: "no daemon" or "too slow" must not hide names once it answers.
      if (!names) return [];
      cache.set(context.name, cacheProject, key, names);
      return names;
    } catch {
      return [];
    }
  };
}
