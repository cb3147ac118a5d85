import { join } from 'node:path';
import { vectorMetricsReader } from './metrics.js';
import { DATA_VERBS, vectorContracts, type Distance } from '../../../api/vector.js';
import type { Area } from '../../area.js';
import { statePaths } from '../../bootstrap.js';
import { Reply, sendJson } from '../../http/router.js';
import { parseInput } from '../../http/validate.js';
import { UpsertParsers } from './upsert-parse.js';
import { ApiError, badRequest, notFound } from '../../http/errors.js';
import type { ProjectNeed } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import type { Principal } from '../auth/principal.js';
import { SessionKeyWatch } from '../auth/session-key-watch.js';
import { vectorMigrations } from './migrations.js';
import { VectorRuntime } from './runtime.js';
import { createIndex, deleteIndex, indexView, listIndexes, patchIndex, requireIndex } from './indexes.js';
import { countPoints, deletePoints, queryPoints, scrollPoints, upsertPointsOffThread } from './points.js';
import { DirectTokens, directCredentials } from './credentials.js';
import { registerDirect, schemaType } from './direct.js';
import { vectorHealth } from './health.js';
import { namesIn } from '../search/names.js';

/**
 * Vector indexes (spec 3 §4.1): index API, data operations, direct-access credentials. A factory,
 * not a constant: each daemon (tests run several in one process) owns its runtime and timers.
 */
export const vectorArea = (): Area => {
  let runtime: VectorRuntime | undefined;
  let parsersOf: UpsertParsers | undefined;
  return {
  name: 'vector',
  migrations: vectorMigrations,
  register(r, ctx) {
    // Contracts under the daemon's settings of the limits spec 3 §8 names (the spec's values by default).
    const C = vectorContracts(ctx.config.vector.limits);
    const R = C.routes;
    const rt = new VectorRuntime(ctx);
    ctx.hooks.searchables.push(namesIn(ctx.db, 'index', 'vec_indexes', "state <> 'deleting'"));
    ctx.hooks.metricsReaders.push(vectorMetricsReader(ctx));
    runtime = rt;
    const tokens = new DirectTokens(ctx);
    ctx.hooks.projectDependents.push((projectId) => {
      const n = rt.store.countIndexes(projectId);
      return n ? `${n} vector index${n > 1 ? 'es' : ''}` : undefined;
    });

    // Every platform route's first step: the session key must load (spec 3 §5: else 503, credentials
    // cannot be verified). The router has already refused a {projectID} that is not a UUID (the
    // contracts' projectIdRule); then the 404 rule and roles.
    const sessionKey = new SessionKeyWatch(join(statePaths(ctx.config.home).keys, 'signing.key'));
    const project = (principal: Principal, ref: string, need: ProjectNeed) => {
      const keyProblem = sessionKey.problem();
      if (keyProblem) throw new ApiError(503, `${keyProblem}; the vector service cannot verify credentials until it loads`);
      return accessProject(ctx, principal, ref, need);
    };

    r.handle(R.list, ({ principal, params, query }) => listIndexes(ctx, rt, project(principal!, params.projectID, 'member'), query));
    r.handle(R.create, ({ principal, params, body, requestId }) =>
      createIndex(ctx, rt, project(principal!, params.projectID, 'member'), principal!, body, requestId),
    );
    r.handle(R.get, ({ principal, params }) => {
      const access = project(principal!, params.projectID, 'member');
      const row = requireIndex(rt, access, params.name);
      // The single GET also names the payload indexes (the dashboard's details); lists stay lean.
      const payload_indexes = rt.store.payloadIndexes(row.id).map((i) => ({ field: i.field_name, type: schemaType(JSON.parse(i.field_schema)) }));
      return { index: { ...indexView(row, access.project, rt), payload_indexes } };
    });
    r.handle(R.patch, ({ principal, params, body, requestId }) =>
      patchIndex(ctx, rt, project(principal!, params.projectID, 'resource-admin'), principal!, params.name, body, requestId),
    );
    r.handle(R.delete, ({ principal, params, requestId }) => {
      deleteIndex(ctx, rt, project(principal!, params.projectID, 'resource-admin'), principal!, params.name, requestId);
      return new Reply(204, undefined);
    });

    const indexFor = (principal: Principal, projectID: string, name: string) =>
      requireIndex(rt, project(principal, projectID, 'member'), name);
    // Upsert bodies are parsed by worker threads (upsert-parse.ts); the checks keep the router's order.
    const parsers = new UpsertParsers();
    parsersOf = parsers;
    r.raw(R.upsert, async (rc, rawParams) => {
      const params = parseInput(R.upsert.params, rawParams, 'path');
      // The index's distance, if the caller may see it, lets the parse worker hand back rows already
      // normalized; any refusal is left for the lookup after the parse, so the errors keep their order.
      let distance: Distance | undefined;
      try {
        distance = indexFor(rc.principal!, params.projectID, params.name).distance;
      } catch {
        distance = undefined;
      }
      const body = await parsers.parse(rc.req, R.upsert.bodyLimit, R.upsert.body, ctx.config.vector.limits.pointsPerUpsert, distance);
      sendJson(rc.res, R.upsert.status, await upsertPointsOffThread(rt, indexFor(rc.principal!, params.projectID, params.name), body));
    });
    r.handle(R.query, ({ principal, params, body }) => queryPoints(rt, indexFor(principal!, params.projectID, params.name), body));
    r.handle(R.scroll, ({ principal, params, body }) => scrollPoints(rt, indexFor(principal!, params.projectID, params.name), body));
    r.handle(R.deletePoints, ({ principal, params, body }) => deletePoints(ctx, rt, indexFor(principal!, params.projectID, params.name), body));
    r.handle(R.count, ({ principal, params, body }) => countPoints(rt, indexFor(principal!, params.projectID, params.name), body ?? {}));

    // Anything else POSTed under /indexes/: a missing or unknown :verb is a 400 (spec 3 §4.1), after
    // the project gate so outsiders still see 404.
    r.handle(R.customVerb, ({ principal, params }) => {
      project(principal!, params.projectID, 'member');
      const target = params.target;
      if (target.includes('/')) throw notFound(`no route for POST ${target}`);
      const colon = target.indexOf(':');
      if (colon < 0) throw badRequest(`POST needs a custom method: use ${target}:${DATA_VERBS.join(`, ${target}:`)}`);
      throw badRequest(`unknown custom method ":${target.slice(colon + 1)}": expected one of ${DATA_VERBS.map((v) => ':' + v).join(', ')}`);
    });

    r.handle(R.credentials, async ({ principal, params, req }) =>
      directCredentials(rt, tokens, project(principal!, params.projectID, 'resource-admin'), req),
    );
    registerDirect(r, ctx, rt, tokens, C);
    r.handle(R.health, () => {
      const h = vectorHealth(rt);
      return h.ok ? h.body : new Reply(503, h.body);
    });
  },
  async start() {
    runtime?.start();
  },
  async stop() {
    await parsersOf?.stop();
    await runtime?.stop();
  },
  };
};
