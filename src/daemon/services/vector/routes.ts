import { DATA_VERBS, vectorRoutes as R } from '../../../api/vector.js';
import type { Area } from '../../area.js';
import { Reply } from '../../http/router.js';
import { badRequest, notFound } from '../../http/errors.js';
import { accessProject } from '../accounts/projects.js';
import { vectorMigrations } from './migrations.js';
import { VectorRuntime } from './runtime.js';
import { createIndex, deleteIndex, indexView, listIndexes, patchIndex, requireIndex } from './indexes.js';
import { deletePoints, queryPoints, scrollPoints, upsertPoints } from './points.js';
import { DirectTokens, directCredentials } from './credentials.js';
import { registerDirect } from './direct.js';

/**
 * Vector indexes (spec 3 §4.1): index API, data operations, direct-access credentials. A factory,
 * not a constant: each daemon (tests run several in one process) owns its runtime and timers.
 */
export const vectorArea = (): Area => {
  let runtime: VectorRuntime | undefined;
  return {
  name: 'vector',
  migrations: vectorMigrations,
  register(r, ctx) {
    const rt = new VectorRuntime(ctx);
    runtime = rt;
    const tokens = new DirectTokens(ctx);
    ctx.hooks.projectDependents.push((projectId) => {
      const n = rt.store.countIndexes(projectId);
      return n ? `${n} vector index${n > 1 ? 'es' : ''}` : undefined;
    });

    r.handle(R.list, ({ principal, params, query }) => listIndexes(ctx, rt, accessProject(ctx, principal!, params.projectID, 'member'), query));
    r.handle(R.create, ({ principal, params, body, requestId }) =>
      createIndex(ctx, rt, accessProject(ctx, principal!, params.projectID, 'member'), principal!, body, requestId),
    );
    r.handle(R.get, ({ principal, params }) => {
      const access = accessProject(ctx, principal!, params.projectID, 'member');
      return { index: indexView(requireIndex(rt, access, params.name), access.project) };
    });
    r.handle(R.patch, ({ principal, params, body, requestId }) =>
      patchIndex(ctx, rt, accessProject(ctx, principal!, params.projectID, 'resource-admin'), principal!, params.name, body, requestId),
    );
    r.handle(R.delete, ({ principal, params, requestId }) => {
      deleteIndex(ctx, rt, accessProject(ctx, principal!, params.projectID, 'resource-admin'), principal!, params.name, requestId);
      return new Reply(204, undefined);
    });

    const indexFor = (principal: Parameters<typeof accessProject>[1], projectID: string, name: string) =>
      requireIndex(rt, accessProject(ctx, principal, projectID, 'member'), name);
    r.handle(R.upsert, ({ principal, params, body }) => upsertPoints(ctx, rt, indexFor(principal!, params.projectID, params.name), body));
    r.handle(R.query, ({ principal, params, body }) => queryPoints(rt, indexFor(principal!, params.projectID, params.name), body));
    r.handle(R.scroll, ({ principal, params, body }) => scrollPoints(rt, indexFor(principal!, params.projectID, params.name), body));
    r.handle(R.deletePoints, ({ principal, params, body }) => deletePoints(ctx, rt, indexFor(principal!, params.projectID, params.name), body));

    // Anything else POSTed under /indexes/: a missing or unknown :verb is a 400 (spec 3 §4.1), after
    // the project gate so outsiders still see 404.
    r.handle(R.customVerb, ({ principal, params }) => {
      accessProject(ctx, principal!, params.projectID, 'member');
      const target = params.target;
      if (target.includes('/')) throw notFound(`no route for POST ${target}`);
      const colon = target.indexOf(':');
      if (colon < 0) throw badRequest(`POST needs a custom method: use ${target}:${DATA_VERBS.join(`, ${target}:`)}`);
      throw badRequest(`unknown custom method ":${target.slice(colon + 1)}": expected one of ${DATA_VERBS.map((v) => ':' + v).join(', ')}`);
    });

    r.handle(R.credentials, async ({ principal, params, req }) =>
      directCredentials(rt, tokens, accessProject(ctx, principal!, params.projectID, 'resource-admin'), req),
    );
    registerDirect(r, ctx, rt, tokens);
  },
  async start() {
    runtime?.start();
  },
  async stop() {
    runtime?.stop();
  },
  };
};
