import { cacheRoutes } from '../../../api/cache.js';
import { cacheBackupPart, cacheMetricsReader } from './operations.js';
import type { Area } from '../../area.js';
import { Reply } from '../../http/router.js';
import { cacheMigrations } from './migrations.js';
import { DockerDriver } from './docker-driver.js';
import { ProcessDriver } from './process-driver.js';
import { CacheService } from './service.js';
import { namesIn } from '../search/names.js';

/**
 * The cache area (spec 3 §4.2). A factory rather than a singleton: every daemon (several run in
 * one test process) gets its own supervisor and instance runners.
 */
export function createCacheArea(): Area & { service?: CacheService } {
  const area: Area & { service?: CacheService } = {
    name: 'cache',
    migrations: cacheMigrations,
    register(r, ctx) {
      const cfg = ctx.config.cache;
      const driver = cfg.driver === 'docker' ? new DockerDriver(cfg.dockerImage) : new ProcessDriver(cfg.serverBin);
      const svc = (area.service = new CacheService(ctx, driver));
      ctx.hooks.searchables.push(namesIn(ctx.db, 'cache', 'cache_instances', "state <> 'deleting'"));
      ctx.hooks.projectDependents.push((projectId) => svc.dependents(projectId));
      // An instance is a single-replica server in the project (spec 3 §2.2: replicas, WorkloadReady),
      // so a running one fills the running-instances quota like any workload's instance.
      ctx.hooks.quotaUsage.push((projectId) => ({ source: 'cache', used: { instances: svc.runningIn(projectId), ...svc.reservedIn(projectId) } }));
      ctx.hooks.metricsReaders.push(cacheMetricsReader(ctx, svc));
      ctx.hooks.backupPreparers.push(cacheBackupPart(ctx, svc));

      r.handle(cacheRoutes.list, ({ principal, params, query }) => svc.list(principal!, params.projectID, query));
      r.handle(cacheRoutes.get, ({ principal, params }) => svc.get(principal!, params.projectID, params.name));
      r.handle(cacheRoutes.stats, ({ principal, params }) => svc.stats(principal!, params.projectID, params.name));
      r.handle(cacheRoutes.create, ({ principal, params, body, requestId }) => svc.create(principal!, params.projectID, body, requestId));
      r.handle(cacheRoutes.delete, ({ principal, params, requestId }) => svc.delete(principal!, params.projectID, params.name, requestId));
      r.handle(cacheRoutes.rotate, ({ principal, params, requestId }) => svc.rotate(principal!, params.projectID, params.name, requestId));
      r.handle(cacheRoutes.healthz, async () => {
        const h = await svc.health();
        return h.status === 'ok' ? h : new Reply(503, h);
      });
      r.handle(cacheRoutes.livez, () => ({ status: 'ok' as const }));
    },
    async start() {
      await area.service?.start();
    },
    async stop() {
      await area.service?.stop();
    },
  };
  return area;
}
