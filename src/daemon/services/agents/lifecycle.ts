import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import type { Db } from '../../store/db.js';
import { tx } from '../../store/db.js';
import { ApiError } from '../../http/errors.js';
import { addReservations, instanceRefusal, proxiedReservation, quotaLimit, quotaUsed, type Reservation } from '../accounts/quota-use.js';
import { createWorkloadKey } from '../auth/keys.js';
import { BuildLog } from '../../runtime/build-log.js';
import { BuildQueue } from '../../runtime/build-queue.js';
import { runBuildStep } from '../../runtime/build-step.js';
import type { Driver } from '../../runtime/driver.js';
import { ProcessDriver } from '../../runtime/process-driver.js';
import { DockerDriver } from '../../runtime/docker-driver.js';
import { sharedPorts, type PortAllocator } from '../../runtime/ports.js';
import { workloadIsolation } from '../../runtime/sandbox.js';
import { Supervisor, type LaunchPlan } from '../../runtime/supervisor.js';
import { agentStore, type AgentRow, type BuildRow, type RevisionRow } from './store.js';
import { invokeLookups } from './invoke-lookups.js';
import { buildCause, clampTimeout } from './view.js';
import { failBuild, failRevision, revisionServes, rollRevision, settleFailure } from './revisions.js';
import { refusedEnvGroup } from './env-rules.js';
import { takeBoundSecrets } from './bound-secrets.js';
import { LogWriter, pruneLogsInChunks } from './log-writer.js';
import type { AgentConfig } from '../../../api/agents.js';
import { TrafficRouter, servedTraffic } from './traffic.js';

/** Spec 1 §8.4 instance sizes (medium is the default). */
const INSTANCE_SIZES = {
  small: { cpus: 0.5, memoryBytes: 512 * 1024 ** 2 },
  medium: { cpus: 1, memoryBytes: 1024 ** 3 },
  large: { cpus: 2, memoryBytes: 2 * 1024 ** 3 },
  xlarge: { cpus: 4, memoryBytes: 4 * 1024 ** 3 },
} as const;

const projectShort = (db: Db, projectId: string) => (db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(projectId) as { short: string }).short;

/**
 * Everything that happens to an agent after the API accepted a change: the build queue, the
 * build itself, the deploying step, revisions, instances (through the supervisor) and logs.
 * The routes and service never touch a driver; this never sees HTTP.
 */
export class AgentRuntime {
  readonly driver: Driver;
  readonly ports: PortAllocator;
  readonly supervisor: Supervisor;
  /** Which revision each request goes to under the agent's traffic split. */
  readonly router = new TrafficRouter();
  private readonly queue: BuildQueue;
  private readonly aborts = new Map<string, AbortController>();
  private readonly buildLogs = new Map<string, BuildLog>();
  private readonly logWriter: LogWriter;
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(private readonly ctx: AreaContext) {
    const w = ctx.config.workloads;
    const workloads = join(ctx.config.home, 'workloads');
    this.driver = w.driver === 'docker' ? new DockerDriver(w.dockerImages) : new ProcessDriver(workloads, join(ctx.config.home, 'cache'), w.isolation);
    this.ports = sharedPorts(w);
    this.supervisor = new Supervisor(this.driver, this.ports, { idleMs: w.idleMs, startTimeoutMs: Math.min(w.deployTimeoutMs, 30_000), restartBackoffMs: w.restartBackoffMs }, {
      currentRevision: (id) => {
        // Asked on every acquire: remembered until agents_agents changes (invoke-lookups.ts).
        const a = invokeLookups(ctx).agentById(id);
        return a?.serving_revision ?? a?.latest_revision ?? undefined;
      },
      plan: async (id, revision) => this.plan(id, revision),
      log: (id, line, force) => this.logWriter.offer(id, line, force),
      crashed: (id, message) => {
        const a = agentStore.byId(ctx.db, id);
        if (a) agentStore.update(ctx.db, id, { message }, isoNow(ctx.clock));
      },
      instanceStarted: (id, i) =>
        agentStore.insertInstance(ctx.db, { id: i.id, agent_id: id, revision: i.revision, driver: this.driver.name, pid: i.pid ?? null, container: i.container ?? null, port: i.port, started_at: isoNow(ctx.clock) }),
      instanceStopped: (_id, instance) => agentStore.deleteInstance(ctx.db, instance),
      ready: (id, ms) => {
        const kind = agentStore.byId(ctx.db, id)?.kind === 'function' ? 'function' : 'agent';
        for (const o of ctx.hooks.coldStartObservers) o(kind, ms / 1000);
      },
    });
    this.queue = new BuildQueue(w.buildConcurrency, (id) => this.runBuild(id));
    this.logWriter = new LogWriter(ctx.db);
  }

  /** Start-up reconcile (daemon restart): reap leftovers, resume builds, finish deploys. */
  async start(): Promise<void> {
    const { db } = this.ctx;
    if (this.driver.name === 'docker' && !(await DockerDriver.available())) {
      this.ctx.log.warn('the docker driver was asked for but no Docker engine answers: builds will fail until dockerd runs');
    }
    // Said once, at start: a missing bubblewrap is never a silent fallback (issue 16).
    void workloadIsolation(this.ctx.config.workloads).then((iso) => {
      if (iso.state === 'unavailable') this.ctx.log.warn(`workload isolation unavailable: ${iso.detail}`, { isolation: iso.state });
      else if (iso.state === 'none') this.ctx.log.warn(`workload isolation ${iso.detail}`, { isolation: iso.state });
      else this.ctx.log.info(`workload isolation: ${iso.detail}`, { isolation: iso.state });
    });
    for (const row of agentStore.instances(db)) {
      await this.driver.reap(row).catch(() => undefined);
      agentStore.deleteInstance(db, row.id);
    }
    // Builds claimed by a daemon that died are run again: this daemon is the only builder.
    for (const b of agentStore.buildsInState(db, 'running')) agentStore.requeueBuild(db, b.id);
    const queued = agentStore.buildsInState(db, 'queued');
    const agents = agentStore.all(db);
    // `daemon status` counts the builds and deploys this start resumes until each has settled.
    const tick = this.ctx.startup.track('agent builds and deploys', queued.length + agents.filter((a) => a.state === 'deploying' && a.latest_revision).length);
    for (const b of queued) {
      this.resumedBuilds.set(b.id, tick);
      this.enqueue(b.id);
    }
    for (const a of agents) {
      if (a.state === 'deploying' && a.latest_revision) void this.deploy(a.id).finally(tick);
      if (a.state === 'building' && !agentStore.activeBuild(db, a.id)) settleFailure(this.ctx, a.id, 'the build was interrupted by a daemon restart; redeploy to build again');
    }
    const w = this.ctx.config.workloads;
    this.every(250, () => this.logWriter.schedule());
    this.every(Math.max(200, Math.min(60_000, w.buildQueueWaitMs / 4)), () => this.expireQueuedBuilds());
    this.pruneLogs();
    this.every(3_600_000, () => this.pruneLogs());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    for (const a of this.aborts.values()) a.abort();
    await this.supervisor.stopAll();
    this.flushLogs();
  }

  /** Queues a build; the caller has inserted the row in its transaction. */
  enqueue(buildId: string): void {
    this.openLog(buildId);
    this.queue.enqueue(buildId);
  }

  /** Cancels a running build (superseded by a newer deploy after a stale claim). */
  abortBuild(buildId: string): void {
    this.aborts.get(buildId)?.abort();
  }

  /** Artifacts (directories or images) of every revision, to discard after a delete. */
  artifacts(agentId: string): string[] {
    return [...new Set((this.ctx.db.prepare('SELECT DISTINCT artifact FROM agents_revisions WHERE agent_id = ? AND artifact IS NOT NULL').all(agentId) as { artifact: string }[]).map((r) => r.artifact))];
  }

  /** Stops every instance of a deleted agent, frees its ports and removes its artifacts. */
  async removeAgent(agentId: string, artifacts: string[]): Promise<void> {
    this.router.forget(agentId);
    await this.supervisor.remove(agentId);
    for (const a of artifacts) await this.driver.discard(a).catch(() => undefined);
    if (this.driver.name === 'process') rmSync(join(this.ctx.config.home, 'workloads', agentId), { recursive: true, force: true });
  }

  /** Replaces the running instance after a settings change so the new revision serves next. */
  async recycle(agentId: string, why: string): Promise<void> {
    await this.supervisor.recycle(agentId, why);
  }

  /** Stops the instances of every revision (a traffic split's too): a change not carried by a revision. */
  async recycleAll(agentId: string, why: string): Promise<void> {
    await this.supervisor.recycleAll(agentId, why);
  }

  /**
   * After the split changed (or a new revision serves): every revision with a share gets an
   * instance started now, idle instances of revisions left with 0 % stop (busy ones finish and
   * scale to zero). A revision that fails to start is logged; its requests get the 503 of a cold start.
   */
  async applyTraffic(agentId: string): Promise<void> {
    const agent = agentStore.byId(this.ctx.db, agentId);
    if (!agent || this.stopped) return;
    const routed = servedTraffic(agent).map((t) => t.revision_name);
    await this.supervisor.retire(agentId, routed, 'its revision no longer takes traffic');
    await Promise.all(
      routed.map((revision) =>
        this.supervisor.warm(agentId, revision).catch((e: Error) => this.ctx.log.warn('a revision of the traffic split did not start', { agent: agent.name, revision, error: e.message.slice(0, 500) })),
      ),
    );
  }

  /** Running instances per project, for the instances quota. */
  runningIn(projectId: string): number {
    return this.supervisor.runningKeys().filter((id) => agentStore.byId(this.ctx.db, id)?.project_id === projectId).length;
  }

  /** What the project's running instances hold against the CPU and memory quotas: each its size and its proxy. */
  reservedIn(projectId: string): Reservation {
    const mine = this.supervisor.runningInstances().filter((i) => agentStore.byId(this.ctx.db, i.key)?.project_id === projectId);
    return addReservations(mine.map((i) => proxiedReservation(i.limits ?? INSTANCE_SIZES.medium)));
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }

  /** The build, then (once its revision is committed) the deploying step; the build's log ends first. */
  private async runBuild(buildId: string): Promise<void> {
    try {
      const log = this.openLog(buildId);
      let built: string | undefined;
      try {
        built = await this.build(buildId, log);
      } finally {
        log.end();
        this.buildLogs.delete(buildId);
      }
      if (built) await this.deploy(built);
    } finally {
      this.resumedBuilds.get(buildId)?.();
      this.resumedBuilds.delete(buildId);
    }
  }

  /** Builds a daemon start resumed, with the tick that counts each one settled. */
  private readonly resumedBuilds = new Map<string, () => void>();

  /** Runs one build; returns the agent's id when its revision was committed. */
  private async build(buildId: string, log: BuildLog): Promise<string | undefined> {
    const { db, clock } = this.ctx;
    if (this.stopped || !agentStore.claimBuild(db, buildId, isoNow(clock))) return undefined;
    const build = agentStore.build(db, buildId)!;
    const agent = agentStore.byId(db, build.agent_id);
    if (!agent) return undefined;
    const files = agentStore.files(db, agent.id);
    const short = projectShort(db, agent.project_id);
    const digest = createHash('sha256');
    digest.update(`${agent.framework}\0${agent.runtime ?? ''}\0`);
    for (const f of files) digest.update(`${f.path}\0${f.content.length}\0`).update(f.content);
    const image = `local/${short}/${agent.name}@sha256:${digest.digest('hex')}`;
    log.append(`build ${buildId} for ${agent.name} (${agent.framework}${agent.runtime ? `/${agent.runtime}` : ''}) on the ${this.driver.name} driver\n`);
    const spec = { agentId: agent.id, revision: buildId, image, framework: agent.framework, runtime: agent.runtime ?? undefined, files, pip: this.ctx.config.workloads.pip };
    const step = await runBuildStep(this.driver, spec, log, { buildId, timeoutMs: this.ctx.config.workloads.buildTimeoutMs, aborts: this.aborts });
    const artifact = step.artifact?.ref;
    const failure = step.failure;
    return tx(db, () => {
      const current = agentStore.byId(db, agent.id);
      if (!current || agentStore.build(db, buildId)?.state !== 'running') return undefined;
      const refused = failure ? undefined : takeBoundSecrets(this.ctx, current);
      if (refused) log.append(`${refused}\n`);
      if (failure || refused) {
        failBuild(this.ctx, current, build, log.text(), refused ?? failure?.cause ?? buildCause(log.text()));
        return undefined;
      }
      agentStore.finishBuild(db, buildId, 'succeeded', log.text(), isoNow(clock));
      rollRevision(this.ctx, current, build.reason, buildId, image, artifact!);
      return agent.id;
    });
  }

  private openLog(buildId: string): BuildLog {
    let log = this.buildLogs.get(buildId);
    if (!log) this.buildLogs.set(buildId, (log = new BuildLog()));
    return log;
  }

  /** The output of a queued or running build, to follow live; undefined once the build ended (read the stored output). */
  liveBuild(buildId: string): BuildLog | undefined {
    return this.buildLogs.get(buildId);
  }

  /**
   * The deploying step: wait for the project's service quota to admit the revision, then start
   * an instance and see /healthz answer. A not-ready condition older than the deploy timeout
   * (two minutes) fails the agent (spec 1 §3).
   */
  private async deploy(agentId: string): Promise<void> {
    const { db, clock } = this.ctx;
    const deadline = Date.now() + this.ctx.config.workloads.deployTimeoutMs;
    let agent = agentStore.byId(db, agentId);
    while (agent && !this.stopped) {
      const limit = quotaLimit(this.ctx, agent.project_id, 'services');
      // Serverless revisions fill the same Services quota (spec 1 §8.3).
      const elsewhere = quotaUsed(this.ctx, agent.project_id, 'services', ['agents']);
      const others = elsewhere + (
        db.prepare(`SELECT COUNT(*) AS n FROM agents_agents WHERE project_id = ? AND id != ? AND state IN ('ready','deploying') AND latest_revision IS NOT NULL`).get(agent.project_id, agentId) as {
          n: number;
        }
      ).n;
      if (!limit || others + 1 <= limit) break;
      const message = `project at its service limit: ${others} of ${limit} services used (an agent or function holds one, every serverless revision two); the revision will serve when one is freed`;
      if (Date.now() > deadline) {
        failRevision(this.ctx, agentId, agent.latest_revision, message);
        return;
      }
      if (agent.message !== message) agentStore.update(db, agentId, { message }, isoNow(clock));
      await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(50, this.ctx.config.workloads.deployTimeoutMs / 20))));
      agent = agentStore.byId(db, agentId);
    }
    if (!agent || this.stopped || !agent.latest_revision) return;
    const revision = agent.latest_revision;
    const previous = agent.serving_revision ?? null;
    const stillDeploying = () => {
      const now = agentStore.byId(db, agentId);
      return now !== undefined && now.latest_revision === revision && now.state === 'deploying';
    };
    // Blue-green when a previous revision serves: the new one starts beside it and takes the requests
    // only once healthy, so a revision that fails to start never interrupts the one serving. Without
    // one (or when the instance quota leaves no room for both), the new revision takes the slot now.
    let sideBySide = previous !== null && previous !== revision;
    const switchNow = async () => {
      sideBySide = false;
      agentStore.update(db, agentId, { serving_revision: revision }, isoNow(clock));
      await this.supervisor.recycle(agentId, `revision ${revision} is deploying`);
    };
    if (!sideBySide) await switchNow();
    // Not-ready conditions keep the agent deploying with the serving layer's text until the
    // deploy timeout (spec 1 §3): a quota that does not admit the instance, and one failed start
    // (Cloud Run's "container restarted once"); a second failed start is the handler's own fault.
    let failedStarts = 0;
    for (;;) {
      try {
        await this.supervisor.warm(agentId, revision);
        break;
      } catch (e) {
        if (this.stopped || !stillDeploying()) return;
        const quotaRefusal = e instanceof ApiError && e.status === 503;
        if (quotaRefusal && sideBySide) {
          await switchNow();
          continue;
        }
        if (!quotaRefusal) failedStarts++;
        const message = `revision ${revision} did not become ready: ${(e as Error).message}`.slice(0, 4100);
        if ((!quotaRefusal && failedStarts >= 2) || Date.now() > deadline) {
          failRevision(this.ctx, agentId, revision, message, previous);
          return;
        }
        agentStore.update(db, agentId, { message: quotaRefusal ? message : `${message}\n(restarted once; still deploying)` }, isoNow(clock));
        await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(50, this.ctx.config.workloads.deployTimeoutMs / 20))));
      }
    }
    if (sideBySide) {
      const promoted = await this.supervisor.promote(agentId, revision, `replaced by revision ${revision}`, () => {
        if (!stillDeploying()) return false;
        agentStore.update(db, agentId, { serving_revision: revision }, isoNow(clock));
        return true;
      });
      // Its instance stopped meanwhile (a crash, a daemon stop): the switch still happens; the next request starts it.
      if (!promoted && stillDeploying()) await switchNow();
    }
    revisionServes(this.ctx, agentId, revision);
    // Under a pinned split the new revision proved it starts but takes no requests: it stops now.
    await this.applyTraffic(agentId);
  }

  /** Everything an instance of that revision needs: its artifact and the workload's environment. */
  private plan(agentId: string, revision: string | undefined): LaunchPlan {
    const { db } = this.ctx;
    const agent = agentStore.byId(db, agentId);
    const rev = agent && revision ? agentStore.revisionByName(db, agentId, revision) : undefined;
    if (!agent || !rev) throw new ApiError(503, 'the agent has no built revision yet');
    const size = INSTANCE_SIZES[(JSON.parse(rev.config) as AgentConfig).instance_size ?? 'medium'];
    // Every area's running instances fill the same quotas (serverless, MCP, cache).
    const refusal = instanceRefusal(this.ctx, agent.project_id, proxiedReservation(size));
    if (refusal) throw new ApiError(503, refusal, { 'Retry-After': '5' });
    return { revision: rev.name, artifact: rev.artifact!, framework: agent.framework, runtime: agent.runtime ?? undefined, env: this.workloadEnv(agent, rev), limits: size };
  }

  /**
   * The workload's environment (spec 1 §4.12): the agent's own env, then secrets, then the
   * platform's names, which always win. Model variables are platform defaults that env may
   * override; MODEL_API_KEY comes from the agent's secret when set.
   */
  workloadEnv(agent: AgentRow, rev: RevisionRow): Record<string, string> {
    const { db, config, clock } = this.ctx;
    const env = JSON.parse(rev.env) as Record<string, string>;
    // Secrets may carry any name (spec 1 §4.12), but reserved process names are never injected:
    // a secret called PATH must not break the runtime.
    const secrets = Object.fromEntries(Object.entries(agentStore.kv(db, 'agents_secrets', agent.id)).filter(([k]) => refusedEnvGroup(k) !== 'reserved'));
    const m = config.workloads.model;
    const cfg = JSON.parse(rev.config) as AgentConfig;
    let key = agent.workload_key;
    if (!key) {
      key = createWorkloadKey(db, clock, agent.project_id, agent.name);
      agentStore.update(db, agent.id, { workload_key: key }, isoNow(clock));
    }
    const defaults: Record<string, string> = { MODEL_BASE_URL: m.baseUrl, CHAT_MODEL: m.chatModel, EMBED_MODEL: m.embedModel, EMBED_BASE_URL: m.embedBaseUrl };
    return {
      ...Object.fromEntries(Object.entries(defaults).filter(([, v]) => v)),
      ...env,
      ...secrets,
      ...(secrets.MODEL_API_KEY || m.apiKey ? { MODEL_API_KEY: secrets.MODEL_API_KEY || m.apiKey } : {}),
      AGENT_NAME: agent.name,
      // Cloud Run's and Knative's name for it: under a traffic split, which revision answered.
      K_REVISION: rev.name,
      AGENT_IMAGE: agent.image ?? '',
      PROJECT_SHORT: projectShort(db, agent.project_id),
      SVC_API_URL: `http://${config.host}:${config.port}`,
      // The code sandbox's listener (spec 2 §4.6): the run_python tool of the harness calls it.
      SANDBOX_URL: `http://${config.host}:${config.sandbox.port}`,
      SVC_PROJECT_ID: agent.project_id,
      SVC_PROJECT_KEY: key,
      PLATFORM_REQUEST_TIMEOUT_SECONDS: String(clampTimeout(cfg.timeout_seconds)),
      ...(this.ctx.hooks.mcpServers ? { MCP_SERVERS: JSON.stringify(this.ctx.hooks.mcpServers.render(agent.project_id, JSON.parse(rev.mcp_servers ?? '[]') as string[])) } : {}),
      // The memory policy of now, not of the revision: the daemon applies the policy at once
      // (injection, memorize), so a pinned revision must not see an older one.
      ...this.ctx.hooks.agentSessions?.workloadEnv(agent.id),
    };
  }

  /** Persists every queued line now (history reads, daemon stop). */
  flushLogs(): void {
    this.logWriter.flush();
  }

  private pruneLogs(): void {
    const before = new Date(this.ctx.clock.now() - this.ctx.config.workloads.logRetentionMs).toISOString();
    pruneLogsInChunks(this.ctx.db, before).catch((e: Error) => this.ctx.log.warn('log retention sweep failed', { error: e.message }));
  }

  /** A build that never reaches a builder slot fails after the queue wait (spec 1 §3, §8.5). */
  private expireQueuedBuilds(): void {
    const { db, clock, config } = this.ctx;
    const cutoff = clock.now() - config.workloads.buildQueueWaitMs;
    for (const b of agentStore.buildsInState(db, 'queued') as BuildRow[]) {
      if (Date.parse(b.queued_at) > cutoff) continue;
      const minutes = Math.round(config.workloads.buildQueueWaitMs / 60_000);
      const message = `the build never started: it waited ${minutes >= 1 ? `${minutes} minutes` : `${Math.round(config.workloads.buildQueueWaitMs / 1000)} s`} for a builder slot`;
      tx(db, () => {
        const agent = agentStore.byId(db, b.agent_id);
        if (!agent || agentStore.build(db, b.id)?.state !== 'queued') return;
        failBuild(this.ctx, agent, b, `${message}\n`, message);
      });
      this.buildLogs.get(b.id)?.append(`${message}\n`);
      this.buildLogs.get(b.id)?.end();
      this.buildLogs.delete(b.id);
    }
  }
}
