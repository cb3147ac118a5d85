import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { agentsMetricsReader } from './metrics.js';
import { mkdirSync } from 'node:fs';
import { agentRoutes, type LogLine } from '../../../api/agents.js';
import type { Area, AreaContext } from '../../area.js';
import type { ServerResponse } from 'node:http';
import { HANDLED, sendJson, type Router } from '../../http/router.js';
import { MANAGEMENT_AUTH_REQUIRED, badRequest, unauthorized } from '../../http/errors.js';
import type { Principal } from '../auth/principal.js';
import { parseInput } from '../../http/validate.js';
import { formatLogLine, type LogCapture } from '../../runtime/log-capture.js';
import { ownedAgent } from './access.js';
import { acquire, invoke, invokeTarget, servingAgent } from './invoke.js';
import { AgentRuntime } from './lifecycle.js';
import { agentMigrations } from './migrations.js';
import { parsePublicHost, serveForGateway, servePublic } from './public-host.js';
import * as svc from './service.js';
import { registerSecretBindings } from './secret-bindings.js';
import { searchAgents } from './searchable.js';
import { observeInvoke, recordInvoke } from './invoke-record.js';
import { registerSpecRoute } from './spec.js';
import { registerTrafficRoutes } from './traffic-routes.js';
import { agentStore, type BuildRow } from './store.js';
import { readSourceArchive } from './unpack.js';
import { readDeployUpload } from './upload.js';

/**
 * Agents and functions (spec 1 §4.12, §4.13): deploy, lifecycle, logs, secrets, env, files,
 * invoke, and the Host-routed public address. A fresh area per daemon: it owns processes.
 */
export function createAgentsArea(): Area {
  let rt: AgentRuntime | undefined;
  return {
    name: 'agents',
    migrations: agentMigrations,
    register(r, ctx) {
      rt = new AgentRuntime(ctx);
      const d: svc.Deps = { ctx, rt };
      registerRoutes(r, d);
      registerSecretBindings(d);
      registerSpecRoute(r, d);
      registerTrafficRoutes(r, d);
      ctx.hooks.invokeAgent = async (c, projectId, name, asEndUser) => {
        const agent = servingAgent(d, name, projectId);
        observeInvoke(ctx, agent, c.res);
        await invoke(d, undefined, agent, c.req, c.res, false, asEndUser);
      };
      ctx.hooks.metricsReaders.push(agentsMetricsReader(ctx, rt));
      ctx.hooks.recycleAgent = (agentId, why) => rt!.recycleAll(agentId, why);
      ctx.hooks.agentInstances = (agentId) => rt!.supervisor.runningKeys().filter((k) => k === agentId).length;
      ctx.hooks.projectDependents.push((projectId) => {
        const n = agentStore.countInProject(ctx.db, projectId);
        return n ? `${n} agent${n === 1 ? '' : 's'}` : undefined;
      });
      // Spec 1 §8.3: every agent or function holds one Services entry; its running instances count, with their CPU and memory.
      ctx.hooks.quotaUsage.push((projectId) => ({
        source: 'agents',
        used: { services: agentStore.countInProject(ctx.db, projectId), instances: rt!.runningIn(projectId), ...rt!.reservedIn(projectId) },
      }));
      ctx.hooks.nameInUse.push((projectId, name) => {
        const a = agentStore.byName(ctx.db, projectId, name);
        return a ? `${a.kind} ${name}` : undefined;
      });
      // A delivery counts in the agent's metrics like an invoke, timed from the lease to its answer.
      (ctx.hooks.triggerTargets ??= {}).lease = async (projectId, name) => {
        const agent = servingAgent(d, name, projectId);
        const started = performance.now();
        const lease = await acquire(d, agent);
        return { ...lease, release: (status: number) => (lease.release(), recordInvoke(ctx, agent, status, performance.now() - started)) };
      };
      ctx.hooks.triggerTargets.workload = (projectId, name) => {
        const a = agentStore.byName(ctx.db, projectId, name);
        return a ? (a.kind === 'function' ? 'function' : 'agent') : undefined;
      };
      ctx.hooks.agentNames.push((ids) => agentStore.namesIn(ctx.db, ids));
      ctx.hooks.unownedAgents.push(() => agentStore.unowned(ctx.db));
      ctx.hooks.hostRoutes.push({ matches: (host) => parsePublicHost(host, ctx.config.appsDomain) !== undefined, serve: (c) => servePublic(d, c) });
      ctx.hooks.agentForward = (c, projectId, name, kind) => serveForGateway(d, c, projectId, name, kind);
      // Plain members search their own agents only, as they list them (spec 1 §4.12).
      ctx.hooks.searchables.push((scope, needle, limit) => searchAgents(ctx.db, scope, needle, limit));
      ctx.hooks.workloadOwnAgent = (p, name) => {
        if (p.workload !== name) return undefined;
        const agent = agentStore.byName(ctx.db, p.projectId, name);
        return agent ? { projectId: agent.project_id, agentId: agent.id, name: agent.name } : undefined;
      };
      ctx.hooks.ownedAgent = (p, name, ref) => {
        const { access, agent } = ownedAgent(ctx, p, name, ref);
        return { projectId: access.project.id, agentId: agent.id, name: agent.name };
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
  const { ctx } = d;
  const need = (p: Principal | undefined): Principal => {
    if (!p) throw unauthorized(MANAGEMENT_AUTH_REQUIRED);
    return p;
  };

  r.raw(agentRoutes.deploy, async ({ req, res, principal, requestId }) => {
    const who = need(principal);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const query = parseInput(agentRoutes.deploy.query, Object.fromEntries(url.searchParams), 'query');
    const tmp = join(ctx.config.home, 'builds', 'uploads');
    mkdirSync(tmp, { recursive: true });
    const upload = await readDeployUpload(req, tmp, ctx.config.workloads.maxUploadBytes);
    try {
      const form = svc.checkDeployForm(upload.fields);
      // Project and ownership are checked before the archive is read: a refusal costs nothing.
      svc.precheckDeploy(d, who, form.name, query.project);
      if (!upload.codePath) throw badRequest('missing code: attach the source as a .tar.gz file field named code');
      const files = await readSourceArchive(upload.codePath);
      sendJson(res, 202, svc.deploy(d, who, query.project, form, files, requestId));
    } finally {
      upload.cleanup();
    }
  });
  r.handle(agentRoutes.list, ({ principal, query }) => svc.list(d, principal!, query));
  r.handle(agentRoutes.get, ({ principal, params, query }) => svc.get(d, principal!, params.name, query.project));
  r.handle(agentRoutes.delete, ({ principal, params, query, requestId }) => svc.remove(d, principal!, params.name, query.project, requestId));
  r.handle(agentRoutes.redeploy, ({ principal, params, query, requestId }) => svc.redeploy(d, principal!, params.name, query.project, requestId));
  r.handle(agentRoutes.revisions, ({ principal, params, query }) => svc.revisions(d, principal!, params.name, query));
  r.handle(agentRoutes.logHistory, ({ principal, params, query }) => svc.logHistory(d, principal!, params.name, query));
  r.handle(agentRoutes.logs, ({ principal, params, query, res }) => {
    const { agent } = ownedAgent(ctx, principal!, params.name, query.project);
    liveLogs(d, agent.id, agent.name, query.follow === 'true' || query.follow === '1', res);
    return HANDLED;
  });
  r.handle(agentRoutes.buildLog, ({ principal, params, query, res }) => {
    buildLog(d, svc.buildOf(d, principal!, params.name, query), query.follow === 'true' || query.follow === '1', res);
    return HANDLED;
  });
  r.handle(agentRoutes.secretsGet, ({ principal, params, query }) => svc.secretsGet(d, principal!, params.name, query.project));
  r.handle(agentRoutes.secretsPut, ({ principal, params, query, body, requestId }) => svc.secretsPut(d, principal!, params.name, query.project, body, requestId));
  r.handle(agentRoutes.secretsPatch, ({ principal, params, query, body, requestId }) => svc.secretsPatch(d, principal!, params.name, query.project, body, requestId));
  r.handle(agentRoutes.envGet, ({ principal, params, query }) => svc.envGet(d, principal!, params.name, query.project));
  r.handle(agentRoutes.envPatch, ({ principal, params, query, body, requestId }) => svc.envPatch(d, principal!, params.name, query.project, body, requestId));
  r.handle(agentRoutes.configGet, ({ principal, params, query }) => svc.configGet(d, principal!, params.name, query.project));
  r.handle(agentRoutes.configPatch, ({ principal, params, query, body, requestId }) => svc.configPatch(d, principal!, params.name, query.project, body, requestId));
  r.handle(agentRoutes.filesList, ({ principal, params, query }) => svc.filesList(d, principal!, params.name, query.project));
  r.handle(agentRoutes.fileGet, ({ principal, params, query }) => svc.fileGet(d, principal!, params.name, params.path, query.project));
  r.handle(agentRoutes.filePut, ({ principal, params, query, body, requestId }) =>
    svc.filePut(d, principal!, params.name, params.path, query.project, body.content, requestId),
  );
  r.handle(agentRoutes.fileDelete, ({ principal, params, query, requestId }) => svc.fileDelete(d, principal!, params.name, params.path, query.project, requestId));
  for (const [contract, stream] of [
    [agentRoutes.invoke, false],
    [agentRoutes.invokeStream, true],
  ] as const) {
    r.raw(contract, async ({ req, res, principal }, raw) => {
      const params = parseInput(contract.params, raw, 'path');
      const query = parseInput(contract.query, Object.fromEntries(new URL(req.url ?? '/', 'http://localhost').searchParams), 'query');
      const agent = invokeTarget(d, principal, params.name, query.project);
      observeInvoke(ctx, agent, res);
      await invoke(d, principal, agent, req, res, stream);
    });
  }
}

/**
 * A build's output as text/plain: what is kept so far, then (with follow, while the build is
 * queued or running) every later chunk until the build ends; a finished build's stored output.
 */
function buildLog(d: svc.Deps, build: BuildRow, follow: boolean, res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  const live = d.rt.liveBuild(build.id);
  if (!live) {
    res.end(build.output);
    return;
  }
  const kept = live.text();
  if (!follow) {
    res.end(kept || `build ${build.id} is ${build.state}: no output yet\n`);
    return;
  }
  res.flushHeaders();
  if (kept) res.write(kept);
  const unfollow = live.follow(
    (chunk) => res.write(chunk),
    () => res.end(),
  );
  res.on('close', unfollow);
}

/**
 * Live logs as text/plain from the newest running instance (spec 1 §4.12). A scaled-to-zero
 * agent gets 200 and a line saying why there is nothing. With follow the response stays open
 * until the client leaves: lines are written as they are produced, and when the instance stops
 * (scale to zero, crash, new revision) the tail moves on to the next one, as `gcloud run
 * services logs tail` does.
 */
const FOLLOW_UNSENT_BYTES = 1024 * 1024;

function liveLogs(d: svc.Deps, agentId: string, name: string, follow: boolean, res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  const first = d.rt.supervisor.live(agentId);
  if (!first) {
    res.write(`agent ${name} has no running instance: it is scaled to zero (or not started yet); the next request starts one. Persisted lines: GET /v1/agents/${name}/logs/history\n`);
  } else {
    for (const l of first.lines()) res.write(formatLogLine(l));
  }
  if (!follow) {
    res.end();
    return;
  }
  res.flushHeaders();
  let current: LogCapture | undefined;
  let unfollow: (() => void) | undefined;
  // A follower that reads more slowly than the instance logs must not make the daemon buffer
  // without end: past FOLLOW_UNSENT_BYTES waiting in the socket, lines are skipped and counted.
  let skipped = 0;
  const send = (l: LogLine) => {
    if (res.writableLength > FOLLOW_UNSENT_BYTES) {
      skipped++;
      return;
    }
    if (skipped) {
      res.write(`${new Date().toISOString()} ${l.instance} system: ${skipped} line${skipped === 1 ? '' : 's'} not sent: this client reads more slowly than the instance logs\n`);
      skipped = 0;
    }
    res.write(formatLogLine(l));
  };
  const attach = (capture: LogCapture) => {
    current = capture;
    unfollow = capture.follow(send, () => (unfollow = undefined));
  };
  if (first) attach(first);
  // A new instance has no event to wait on here; a light poll finds it (live logs are for people).
  const poll = setInterval(() => {
    if (unfollow) return;
    // A deleted agent will have no next instance: end the stream (the follower's next request is a
    // 404 it can explain) rather than keep it open for nothing. Asked only between instances.
    if (!agentStore.byId(d.ctx.db, agentId)) {
      res.end(`[log stream ended: agent ${name} was deleted]\n`);
      return;
    }
    const next = d.rt.supervisor.live(agentId);
    if (!next || next === current) return;
    for (const l of next.lines()) send(l);
    attach(next);
  }, 200);
  res.on('close', () => {
    clearInterval(poll);
    unfollow?.();
  });
}
