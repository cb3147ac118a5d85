import { serverlessRoutes } from '../../../api/serverless.js';
import { serverlessMetricsReader } from './metrics.js';
import type { Area, AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { notFound } from '../../http/errors.js';
import { HANDLED, sendJson, type Router } from '../../http/router.js';
import { accessProject } from '../accounts/projects.js';
import { health } from './health.js';
import { serverlessMigrations } from './migrations.js';
import type { DataPlane } from './plane.js';
import { Reconciler } from './reconcile.js';
import * as svc from './service.js';
import { readSourceFiles, receiveSource, sourceImage } from './sources.js';
import { serverlessStore, type Template } from './store.js';
import { instanceReservation } from './revisions.js';
import { addReservations } from '../accounts/quota-use.js';
import { namesIn } from '../search/names.js';

/** Builds the data plane a daemon runs; the control plane hands it the source reader it owns. */
export type PlaneFactory = (ctx: AreaContext, readSource: (image: string) => ReturnType<typeof readSourceFiles>) => DataPlane;

/**
 * Serverless services (spec 2 §2.3, §3, §4.3, §8, §9): the control plane (routes, store,
 * revisions, conditions, traffic decisions) over a data plane that runs revisions. A fresh area
 * per daemon: the data plane owns processes and containers.
 */
export function createServerlessArea(makePlane: PlaneFactory): Area {
  let plane: DataPlane | undefined;
  let reconciler: Reconciler | undefined;
  let planeError = '';
  return {
    name: 'serverless',
    migrations: serverlessMigrations,
    register(r, ctx) {
      plane = makePlane(ctx, (image) => readSourceFiles(ctx.config.home, image));
      reconciler = new Reconciler(ctx, plane);
      const d: svc.Deps = { ctx, plane, reconcile: (id) => reconciler!.apply(id) };
      registerRoutes(r, d, () => planeError || reconciler!.lastError);
      ctx.hooks.searchables.push(namesIn(ctx.db, 'service', 'svc_services'));
      ctx.hooks.metricsReaders.push(serverlessMetricsReader(ctx, () => plane));
      // Spec 1 §8.3: every serverless revision permanently holds two Services entries (public and private).
      // Its running replicas count as instances, each with its resources and proxy.
      ctx.hooks.quotaUsage.push((projectId) => {
        const running = serverlessStore.ids(ctx.db, projectId).flatMap((id) => plane!.instances(id).map((i) => ({ ...i, serviceId: id })));
        return {
          source: 'serverless',
          used: {
            services: 2 * serverlessStore.revisionCount(ctx.db, projectId),
            instances: running.reduce((m, i) => m + i.replicas, 0),
            ...addReservations(
              running.flatMap((i) => {
                const rev = i.replicas ? serverlessStore.revision(ctx.db, i.serviceId, i.revision) : undefined;
                return rev ? Array.from({ length: i.replicas }, () => instanceReservation(JSON.parse(rev.template) as Template)) : [];
              }),
            ),
          },
        };
      });
      (ctx.hooks.triggerTargets ??= {}).service = (projectId, name) => serverlessStore.byName(ctx.db, projectId, name) !== undefined;
      ctx.hooks.nameInUse.push((projectId, name) => (serverlessStore.byName(ctx.db, projectId, name) ? `serverless service ${name}` : undefined));
      ctx.hooks.projectDependents.push((projectId) => {
        const n = serverlessStore.countInProject(ctx.db, projectId);
        return n ? `${n} serverless service${n === 1 ? '' : 's'}` : undefined;
      });
    },
    async start() {
      try {
        reconciler!.start();
      } catch (e) {
        planeError = `reconcile at start-up failed: ${String((e as Error)?.message ?? e)}`;
      }
    },
    async stop() {
      await plane?.stop();
    },
  };
}

function registerRoutes(r: Router, d: svc.Deps, planeError: () => string): void {
  const R = serverlessRoutes;
  r.handle(R.health, () => health(d.ctx, planeError));
  r.handle(R.list, ({ principal, params, query }) => svc.list(d, principal!, params.projectID, query));
  r.handle(R.create, ({ principal, params, body }) => svc.create(d, principal!, params.projectID, body));
  r.handle(R.get, ({ principal, params }) => svc.get(d, principal!, params.projectID, params.name));
  r.handle(R.patch, ({ principal, params, body, req }) =>
    svc.patch(d, principal!, params.projectID, params.name, body, svc.expectedGeneration(req.headers['if-match'])),
  );
  r.handle(R.delete, ({ principal, params }) => svc.remove(d, principal!, params.projectID, params.name));
  r.handle(R.revisions, ({ principal, params }) => svc.revisions(d, principal!, params.projectID, params.name));
  r.handle(R.setTraffic, ({ principal, params, body }) => svc.setTraffic(d, principal!, params.projectID, params.name, body));
  r.handle(R.unknownVerb, ({ principal, params }) => {
    // The project gate already ran: an outsider got 404 for the project; members learn the verb is unknown.
    accessProject(d.ctx, principal!, params.projectID, 'member');
    throw notFound(`unknown custom verb :${params.verb} (only :set-traffic is supported)`);
  });
  r.handle(R.logs, async ({ principal, params, query, res }) => {
    await svc.logs(d, principal!, params.projectID, params.name, query, res);
    return HANDLED;
  });
  r.handle(R.spec, ({ principal, params }) => svc.spec(d, principal!, params.projectID, params.name));
  r.handle(R.metrics, ({ principal, params }) => svc.metrics(d, principal!, params.projectID, params.name));
  r.raw(R.sources, async ({ principal, req, res }, raw) => {
    const access = accessProject(d.ctx, principal!, raw.projectID!, 'member');
    const { hex, size } = await receiveSource(req, d.ctx.config.home, access.project.short, d.ctx.config.workloads.maxUploadBytes);
    serverlessStore.addSource(d.ctx.db, access.project.id, hex, size, isoNow(d.ctx.clock));
    sendJson(res, 201, { image: sourceImage(access.project.short, hex), digest: `sha256:${hex}`, size_bytes: size });
  });
}
