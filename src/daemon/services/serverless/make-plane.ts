import { instanceRefusal } from '../accounts/quota-use.js';
import { instanceReservation } from './revisions.js';
import type { PlaneFactory } from './routes.js';
import { serverlessStore, type Template } from './store.js';
import { ServerlessDataPlane } from './runtime/data-plane.js';
import { registerDataPlaneRoutes } from './runtime/routes.js';

/**
 * The data plane the daemon runs (runtime/, docs/decisions/serverless.md, Data plane): revisions
 * as autoscaled instances, the Host router ahead of the agents' one, the internal path form.
 */
export const makeDataPlane: PlaneFactory = (ctx, readSource) => {
  const plane = new ServerlessDataPlane({
    home: ctx.config.home,
    workloads: ctx.config.workloads,
    readSource,
    log: ctx.log,
    // Read when an instance starts: the listeners' ports are known only once the daemon listens.
    platformPorts: () => [ctx.config.port, ctx.config.internalPort],
    instanceReady: (ms) => {
      for (const o of ctx.hooks.coldStartObservers) o('service', ms / 1000);
    },
    appsDomain: ctx.config.appsDomain,
    // The quotas every area's instances fill (spec 1 §8.3), checked as an agent's start is.
    admit: (t) => {
      const r = serverlessStore.revision(ctx.db, t.serviceId, t.revision);
      return r ? instanceRefusal(ctx, t.projectId, instanceReservation(JSON.parse(r.template) as Template)) : undefined;
    },
  });
  registerDataPlaneRoutes(ctx.hooks, plane);
  return plane;
};
