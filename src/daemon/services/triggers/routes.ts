import { triggerRoutes as R } from '../../../api/triggers.js';
import type { Area } from '../../area.js';
import { triggerClock } from './clock.js';
import { Deliverer } from './deliverer.js';
import { triggerMigrations } from './migrations.js';
import { registerObjectRoutes } from './object-routes.js';
import { ObjectSource } from './object-source.js';
import { PubsubSource } from './pubsub-source.js';
import { Scheduler } from './scheduler.js';
import * as svc from './service.js';
import { triggerStore } from './store.js';

/**
 * Triggers (spec 2 §2.4, §4.4, §6; spec 1 §6.2): schedules, topics and buckets that POST to a
 * service, function or agent of the same project. A fresh area per daemon: it owns timers, a
 * watcher and broker consumers. It starts after the workload areas and stops before them.
 */
export function createTriggersArea(): Area {
  let d: svc.Deps | undefined;
  let objects: ObjectSource | undefined;
  return {
    name: 'triggers',
    migrations: triggerMigrations,
    register(r, ctx) {
      const cfg = ctx.config.triggers;
      const clock = triggerClock(ctx.clock, cfg);
      const deliverer = new Deliverer(ctx, clock, cfg);
      const scheduler = new Scheduler(ctx, clock, cfg, () => deliverer.kick());
      const pubsub = new PubsubSource(ctx, clock, cfg);
      objects = new ObjectSource(ctx, clock, cfg, () => deliverer.kick());
      const deps: svc.Deps = (d = { ctx, clock, cfg, scheduler, deliverer, pubsub });
      r.handle(R.list, ({ principal, params, query }) => svc.list(deps, principal!, params.projectID, query));
      r.handle(R.create, ({ principal, params, body }) => svc.create(deps, principal!, params.projectID, body));
      r.handle(R.get, ({ principal, params }) => svc.get(deps, principal!, params.projectID, params.name));
      r.handle(R.patch, ({ principal, params, body }) => svc.patch(deps, principal!, params.projectID, params.name, body));
      r.handle(R.delete, ({ principal, params }) => svc.remove(deps, principal!, params.projectID, params.name));
      r.handle(R.fire, ({ principal, params }) => svc.fire(deps, principal!, params.projectID, params.name));
      registerObjectRoutes(r, ctx, () => objects!);
      ctx.hooks.projectDependents.push((projectId) => {
        const n = triggerStore.countInProject(ctx.db, projectId);
        return n ? `${n} trigger${n === 1 ? '' : 's'}` : undefined;
      });
    },
    async start() {
      d!.deliverer.start();
      d!.scheduler.start();
      d!.pubsub.start();
      objects!.start();
    },
    async stop() {
      objects?.stop();
      d?.pubsub.stop();
      d?.scheduler.stop();
      await d?.deliverer.stop();
    },
  };
}
