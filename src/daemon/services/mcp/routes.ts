import { mcpRoutes } from '../../../api/mcp.js';
import { mcpMetricsReader } from './metrics.js';
import type { Area } from '../../area.js';
import type { Router } from '../../http/router.js';
import { bearerOf } from './credentials.js';
import { isMcpPath, serveEndpoint } from './endpoint.js';
import { mcpMigrations } from './migrations.js';
import { publishSet } from './publish-set.js';
import { MEDIUM, McpRuntime } from './runtime.js';
import { addReservations, proxiedReservation } from '../accounts/quota-use.js';
import * as svc from './service.js';
import { mcpStore } from './store.js';
import { internalUrl } from './view.js';
import { namesIn } from '../search/names.js';

/**
 * MCP servers (spec 2 §2.2, §3, §4.2): routes, versions and their builds, the protocol endpoint
 * on the path `/mcp/<short>/<name>/mcp`, and MCP_SERVERS for agents. A fresh area per daemon: it
 * owns processes.
 */
export function createMcpArea(): Area {
  let rt: McpRuntime | undefined;
  return {
    name: 'mcp',
    migrations: mcpMigrations,
    register(r, ctx) {
      rt = new McpRuntime(ctx);
      const d: svc.Deps = { ctx, rt };
      registerRoutes(r, d);
      ctx.hooks.searchables.push(namesIn(ctx.db, 'mcp_server', 'mcp_servers'));
      ctx.hooks.metricsReaders.push(mcpMetricsReader(ctx));
      ctx.hooks.pathRoutes.push({ matches: isMcpPath, serve: (c, internal) => serveEndpoint(d, c, internal) });
      // Spec 1 §8.3: a running MCP instance counts like any other, a medium one with its proxy.
      ctx.hooks.quotaUsage.push((projectId) => {
        const instances = mcpStore.instanceCount(ctx.db, projectId);
        return { source: 'mcp', used: { instances, ...addReservations(Array.from({ length: instances }, () => proxiedReservation(MEDIUM))) } };
      });
      ctx.hooks.projectDependents.push((projectId) => {
        const n = mcpStore.countInProject(ctx.db, projectId);
        return n ? `${n} MCP server${n === 1 ? '' : 's'}` : undefined;
      });
      ctx.hooks.mcpServers = {
        // A server with a current version answers its endpoint: that is what an agent can use.
        ready: (projectId) => mcpStore.inProject(ctx.db, projectId).filter((s) => s.current_version !== null && s.serving_version !== null).map((s) => s.id),
        render: (projectId, ids) => {
          const short = (ctx.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(projectId) as { short: string } | undefined)?.short;
          if (!short) return [];
          return ids.flatMap((id) => {
            const s = mcpStore.byId(ctx.db, id);
            return s && s.project_id === projectId ? [{ name: s.name, url: internalUrl(ctx.config, short, s.name), bearer: bearerOf(ctx.db, s) }] : [];
          });
        },
      };
    },
    async start() {
      await rt!.start();
    },
    async stop() {
      await rt?.stop();
    },
  };
}

function registerRoutes(r: Router, d: svc.Deps): void {
  r.handle(mcpRoutes.create, ({ principal, params, body, requestId }) => svc.create(d, principal!, params.projectID, body, requestId));
  r.handle(mcpRoutes.list, ({ principal, params, query }) => svc.list(d, principal!, params.projectID, query));
  r.handle(mcpRoutes.get, ({ principal, params }) => svc.get(d, principal!, params.projectID, params.name));
  r.handle(mcpRoutes.delete, ({ principal, params, requestId }) => svc.remove(d, principal!, params.projectID, params.name, requestId));
  r.handle(mcpRoutes.tools, ({ principal, params }) => svc.tools(d, principal!, params.projectID, params.name));
  r.handle(mcpRoutes.publish, ({ principal, params, body, requestId }) => svc.publish(d, principal!, params.projectID, params.name, params.tool, body, requestId));
  r.handle(mcpRoutes.publishSet, ({ principal, params, body, requestId }) => publishSet(d, principal!, params.projectID, params.name, body, requestId));
  r.handle(mcpRoutes.deleteTool, ({ principal, params, requestId }) => svc.deleteTool(d, principal!, params.projectID, params.name, params.tool, requestId));
  r.handle(mcpRoutes.versions, ({ principal, params }) => svc.versions(d, principal!, params.projectID, params.name));
  r.handle(mcpRoutes.rollback, ({ principal, params, requestId }) => svc.rollback(d, principal!, params.projectID, params.name, params.version, requestId));
  r.handle(mcpRoutes.yank, ({ principal, params, requestId }) => svc.yank(d, principal!, params.projectID, params.name, params.version, true, requestId));
  r.handle(mcpRoutes.unyank, ({ principal, params, requestId }) => svc.yank(d, principal!, params.projectID, params.name, params.version, false, requestId));
  r.handle(mcpRoutes.call, ({ principal, params, body }) => svc.call(d, principal!, params.projectID, params.name, params.tool, body.arguments ?? {}));
}
