import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { loopbackBaseUrl } from '../../config.js';
import { ApiError } from '../../http/errors.js';
import { instanceRefusal, proxiedReservation } from '../accounts/quota-use.js';
import { tx } from '../../store/db.js';
import { BuildLog } from '../../runtime/build-log.js';
import { BuildQueue } from '../../runtime/build-queue.js';
import { runBuildStep } from '../../runtime/build-step.js';
import type { Driver } from '../../runtime/driver.js';
import { DockerDriver } from '../../runtime/docker-driver.js';
import { ProcessDriver } from '../../runtime/process-driver.js';
import { sharedPorts } from '../../runtime/ports.js';
import { Supervisor, type LaunchPlan } from '../../runtime/supervisor.js';
import { bearerOf, workloadKeyOf } from './credentials.js';
import { callInstance } from './rpc.js';
import { mcpStore, parseTools, type ServerRow, type VersionRow } from './store.js';

/** Spec 1 §8.4: MCP servers run at the default instance size, medium (1 CPU, 1 GiB). */
/** Every MCP instance runs at the medium size (spec 1 §8.4's default). */
export const MEDIUM = { cpus: 1, memoryBytes: 1024 ** 3 };

const projectShort = (ctx: AreaContext, projectId: string) =>
  (ctx.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(projectId) as { short: string }).short;

/** The supervisor key of a deploy's trial instance (`<server id>#<version>`). */
const trialKey = (serverId: string, version: number) => `${serverId}#${version}`;

function parseTrialKey(key: string): { serverId: string; version: number } | undefined {
  const i = key.indexOf('#');
  return i < 0 ? undefined : { serverId: key.slice(0, i), version: Number(key.slice(i + 1)) };
}

/** The tail of a failed build's output that names its cause (Docker's own lines left out). */
function causeOf(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(Step \d|--->|Removing intermediate|\$ |build \S+ for|source:|tool set|Sending build)/.test(l));
  return lines.slice(-3).join('\n') || 'the build failed without output';
}

/**
 * Everything that happens to an MCP server after the API accepted a change: the build queue,
 * each version's build (through the driver) and deploy (through the supervisor, verified with
 * tools/list), rollbacks' re-pointing, and the reconcile after a restart. Never sees HTTP.
 */
export class McpRuntime {
  readonly driver: Driver;
  readonly supervisor: Supervisor;
  private readonly queue: BuildQueue;
  private readonly buildLogs = new Map<string, BuildLog>();
  private readonly aborts = new Map<string, AbortController>();
  /** Deploys of one server run one after another (they share its one instance slot). */
  private readonly deploying = new Map<string, Promise<void>>();
  private stopped = false;
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly ctx: AreaContext) {
    const w = ctx.config.workloads;
    this.driver = w.driver === 'docker' ? new DockerDriver(w.dockerImages) : new ProcessDriver(join(ctx.config.home, 'workloads'), join(ctx.config.home, 'cache'), w.isolation);
    this.supervisor = new Supervisor(this.driver, sharedPorts(w), { idleMs: w.idleMs, startTimeoutMs: Math.min(w.deployTimeoutMs, 30_000), restartBackoffMs: w.restartBackoffMs }, {
      currentRevision: (key) => {
        const trial = parseTrialKey(key);
        if (trial) return String(trial.version);
        const v = mcpStore.byId(ctx.db, key)?.serving_version;
        return v === null || v === undefined ? undefined : String(v);
      },
      plan: async (id, revision) => this.plan(id, revision),
      // Tool output stays in the instance's in-memory capture: tools may print what they fetched.
      log: () => true,
      crashed: (id, message) => ctx.log.warn('MCP server instance crashed', { server: id, message }),
      instanceStarted: (id, i) =>
        mcpStore.insertInstance(ctx.db, { id: i.id, server_id: id, version: Number(i.revision), driver: this.driver.name, pid: i.pid ?? null, container: i.container ?? null, port: i.port, started_at: isoNow(ctx.clock) }),
      instanceStopped: (_id, instance) => mcpStore.deleteInstance(ctx.db, instance),
      ready: (_id, ms) => {
        for (const o of ctx.hooks.coldStartObservers) o('mcp', ms / 1000);
      },
    });
    this.queue = new BuildQueue(w.buildConcurrency, (buildId) => this.runBuild(buildId));
  }

  /**
   * Start-up reconcile (restart, kill -9): instances a dead daemon left are reaped (new ones
   * start lazily on the next request); builds it had not finished are built again from their
   * snapshot (docs/decisions/mcp.md); versions it was deploying are deployed again.
   */
  async start(): Promise<void> {
    const { db } = this.ctx;
    for (const row of mcpStore.instances(db)) {
      await this.driver.reap(row).catch(() => undefined);
      mcpStore.deleteInstance(db, row.id);
    }
    for (const v of mcpStore.versionsInState(db, 'building')) mcpStore.updateVersion(db, v.server_id, v.version, { state: 'pending' });
    for (const v of mcpStore.versionsInState(db, 'pending')) this.enqueue(v.build_id);
    for (const v of mcpStore.versionsInState(db, 'deploying')) void this.deploy(v.server_id, v.version);
    const wait = this.ctx.config.workloads.buildQueueWaitMs;
    this.sweeper = setInterval(() => this.expireQueued(), Math.max(200, Math.min(60_000, wait / 4)));
    this.sweeper.unref();
  }

  /** A version that never reaches a builder slot fails after the queue wait (spec 1 §3, §8.5), as agents' builds do. */
  private expireQueued(): void {
    const { db, clock, config } = this.ctx;
    const cutoff = clock.now() - config.workloads.buildQueueWaitMs;
    for (const v of mcpStore.versionsInState(db, 'pending')) {
      if (Date.parse(v.created_at) > cutoff) continue;
      const message = `version ${v.version} never started building: it waited ${Math.round(config.workloads.buildQueueWaitMs / 1000)} s for a builder slot`;
      tx(db, () => {
        if (mcpStore.version(db, v.server_id, v.version)?.state !== 'pending') return;
        mcpStore.updateVersion(db, v.server_id, v.version, { state: 'failed', message });
        this.settleFailure(v.server_id, v.version, message);
      });
      this.buildLogs.get(v.build_id)?.end();
      this.buildLogs.delete(v.build_id);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    for (const a of this.aborts.values()) a.abort();
    await this.supervisor.stopAll();
  }

  enqueue(buildId: string): void {
    this.openLog(buildId);
    this.queue.enqueue(buildId);
  }

  /** Stops a deleted server's instance and removes artifacts no remaining version uses. */
  async removeServer(serverId: string, artifacts: string[]): Promise<void> {
    await this.supervisor.remove(serverId);
    for (const a of artifacts) if (!mcpStore.artifactUsed(this.ctx.db, a)) await this.driver.discard(a).catch(() => undefined);
  }

  /** A leased instance of the serving version (cold-starting one); 503 naming why when it cannot start. */
  async lease(server: ServerRow) {
    try {
      return await this.supervisor.acquire(server.id);
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError(503, `MCP server ${server.name} could not start an instance: ${(e as Error).message}`.slice(0, 4000), { 'Retry-After': '2' });
    }
  }

  private openLog(buildId: string): BuildLog {
    let log = this.buildLogs.get(buildId);
    if (!log) this.buildLogs.set(buildId, (log = new BuildLog()));
    return log;
  }

  private async runBuild(buildId: string): Promise<void> {
    const log = this.openLog(buildId);
    let built: VersionRow | undefined;
    try {
      built = await this.build(buildId, log);
    } finally {
      log.end();
      this.buildLogs.delete(buildId);
    }
    if (built) await this.deploy(built.server_id, built.version);
  }

  /** Builds one version; returns it when its artifact was recorded (state deploying). */
  private async build(buildId: string, log: BuildLog): Promise<VersionRow | undefined> {
    const { db, config } = this.ctx;
    if (this.stopped || !mcpStore.claim(db, buildId)) return undefined;
    const version = mcpStore.versionByBuild(db, buildId)!;
    const server = mcpStore.byId(db, version.server_id);
    if (!server) return undefined;
    this.settle(server.id, version.version, 'building', '');
    const tools = parseTools(version);
    const manifest = {
      server: server.name,
      tools: tools.map((t) => ({ module: t.name, description: t.description, schema: t.schema, credential_keys: t.credential_keys })),
    };
    const files = [
      ...tools.map((t) => ({ path: `tools/${t.name}.py`, content: Buffer.from(t.handler, 'utf8'), mode: 0o644 })),
      { path: 'tools.json', content: Buffer.from(JSON.stringify(manifest, null, 2) + '\n', 'utf8'), mode: 0o644 },
    ];
    const short = projectShort(this.ctx, server.project_id);
    const tag = `platform-mcp-${short}-${server.name}:v${version.version}`;
    log.append(`build ${buildId}: MCP server ${server.name} version ${version.version} (${tools.length} tool${tools.length === 1 ? '' : 's'}) on the ${this.driver.name} driver\n`);
    const spec = { agentId: server.id, revision: `v${version.version}`, image: tag, framework: 'mcp', files, pip: config.workloads.pip };
    const { artifact, failure } = await runBuildStep(this.driver, spec, log, { buildId, timeoutMs: config.workloads.buildTimeoutMs, aborts: this.aborts });
    // A daemon stopping mid-build leaves the version building: the next start builds it again.
    if (this.stopped) return undefined;
    const output = log.text();
    return tx(db, () => {
      const now = mcpStore.version(db, version.server_id, version.version);
      if (!now || now.state !== 'building') {
        // Deleted meanwhile: what was built belongs to nobody.
        if (artifact && !mcpStore.artifactUsed(db, artifact.ref)) void this.driver.discard(artifact.ref).catch(() => undefined);
        return undefined;
      }
      if (failure || !artifact) {
        const cause = failure?.cause ?? causeOf(output);
        mcpStore.updateVersion(db, server.id, version.version, { state: 'failed', message: `version ${version.version} failed to build: ${cause}`, output });
        this.settleFailure(server.id, version.version, `version ${version.version} failed to build: ${cause}`);
        return undefined;
      }
      const digest = artifact.digest ?? artifact.ref;
      const image = this.driver.name === 'docker' ? tag : `local/mcp/${short}/${server.name}@${digest}`;
      // The process driver's check wrote the derived tool list beside the tools.
      const derived = join(artifact.ref, '.platform', 'manifest.json');
      const manifestText = this.driver.name === 'process' && existsSync(derived) ? readFileSync(derived, 'utf8') : null;
      mcpStore.updateVersion(db, server.id, version.version, { state: 'deploying', image, image_digest: digest, artifact: artifact.ref, manifest: manifestText, output });
      this.settle(server.id, version.version, 'deploying', '');
      return mcpStore.version(db, server.id, version.version);
    });
  }

  /** Deploys after the previous deploy of the same server finished. */
  deploy(serverId: string, version: number): Promise<void> {
    const prev = this.deploying.get(serverId) ?? Promise.resolve();
    const next = prev.then(() => this.deployNow(serverId, version)).catch((e: Error) => this.ctx.log.error('MCP deploy failed', { server: serverId, error: e.message }));
    this.deploying.set(serverId, next);
    void next.finally(() => {
      if (this.deploying.get(serverId) === next) this.deploying.delete(serverId);
    });
    return next;
  }

  /**
   * The deploying step: the version takes the server's instance slot, an instance starts and
   * answers /healthz, then tools/list must answer with its tools. A version older than the one
   * already current is recorded ready without taking over (a newer one won the race).
   */
  private async deployNow(serverId: string, version: number): Promise<void> {
    const { db, clock, config } = this.ctx;
    const server = mcpStore.byId(db, serverId);
    const row = mcpStore.version(db, serverId, version);
    if (this.stopped || !server || !row || row.state !== 'deploying') return;
    if (server.current_version !== null && server.current_version > version) {
      mcpStore.updateVersion(db, serverId, version, { state: 'ready' });
      return;
    }
    const previous = server.current_version;
    const previousServing = server.serving_version;
    let listed: { tools?: unknown[] } | undefined;
    let problem: string | undefined;
    // A trial instance of its own first: the serving version's instance is untouched until this
    // one answered /healthz and tools/list, so a version that fails to start never serves.
    const trial = trialKey(serverId, version);
    try {
      await this.supervisor.warm(trial);
      const lease = await this.supervisor.acquire(trial);
      try {
        const answer = await callInstance(lease.port, lease.headers, bearerOf(db, server), { method: 'tools/list' }, config.mcpRequestTimeoutSeconds, `MCP server ${server.name}`);
        if (answer.error) problem = `tools/list answered an error: ${answer.error.message}`;
        else if (!Array.isArray(answer.result?.tools)) problem = 'tools/list answered without a tools list';
        else listed = answer.result as { tools: unknown[] };
      } finally {
        lease.release();
      }
    } catch (e) {
      problem = (e as Error).message;
    } finally {
      await this.supervisor.remove(trial);
    }
    if (this.stopped) return;
    // Verified: the server's slot moves to it and starts it now, so ready means warm. A rollback
    // made meanwhile wins (the rolled-back-to version stays).
    let switched = false;
    if (!problem) {
      switched = tx(db, () => {
        const s = mcpStore.byId(db, serverId);
        if (!s || s.current_version !== previous) return false;
        mcpStore.update(db, serverId, { serving_version: version }, isoNow(clock));
        return true;
      });
      if (switched) {
        try {
          await this.supervisor.warm(serverId);
        } catch (e) {
          problem = (e as Error).message;
        }
      }
    }
    if (this.stopped) return;
    tx(db, () => {
      const now = mcpStore.version(db, serverId, version);
      const s = mcpStore.byId(db, serverId);
      if (!now || !s) return;
      if (problem || !listed) {
        const message = `version ${version} did not become ready: ${problem}`.slice(0, 4000);
        mcpStore.updateVersion(db, serverId, version, { state: 'failed', message });
        if (s.serving_version === version) mcpStore.update(db, serverId, { serving_version: previousServing }, isoNow(clock));
        this.settleFailure(serverId, version, message);
        return;
      }
      mcpStore.updateVersion(db, serverId, version, { state: 'ready', ...(now.manifest ? {} : { manifest: JSON.stringify({ tools: listed.tools }) }) });
      // A rollback while this deployed wins: the rolled-back-to version stays current and serves.
      if (s.serving_version !== version) return this.settle(serverId, version, 'ready', '');
      mcpStore.update(db, serverId, { current_version: version }, isoNow(clock));
      this.settle(serverId, version, 'ready', '');
    });
    if (problem && switched) await this.supervisor.recycle(serverId, `version ${version} failed to deploy`);
  }

  /** The server's state follows its newest version (spec 2 §3); older versions finishing say nothing. */
  private settle(serverId: string, version: number, state: ServerRow['state'], message: string): void {
    if (mcpStore.newestVersion(this.ctx.db, serverId) !== version) return;
    mcpStore.update(this.ctx.db, serverId, { state, message }, isoNow(this.ctx.clock));
  }

  /**
   * The newest version failed (spec 2 §3: building or deploying -> failed, message holds the
   * reason). An older version that is current keeps serving, and the message says so.
   */
  private settleFailure(serverId: string, version: number, message: string): void {
    const s = mcpStore.byId(this.ctx.db, serverId);
    const keeps = s?.current_version !== null && s?.current_version !== undefined && s.current_version !== version ? `; version ${s.current_version} keeps serving` : '';
    this.settle(serverId, version, 'failed', `${message}${keeps}`);
  }

  /** What an instance of a version needs: its artifact and the environment of docs/decisions/mcp.md. */
  private plan(key: string, revision: string | undefined): LaunchPlan {
    const { db, config } = this.ctx;
    const serverId = parseTrialKey(key)?.serverId ?? key;
    const server = mcpStore.byId(db, serverId);
    const v = server && revision ? mcpStore.version(db, serverId, Number(revision)) : undefined;
    if (!server || !v?.artifact) throw new ApiError(503, `MCP server has no built version to run yet`, { 'Retry-After': '2' });
    // The quotas every area's instances fill (spec 1 §8.3), checked as an agent's start is.
    const refusal = instanceRefusal(this.ctx, server.project_id, proxiedReservation(MEDIUM));
    if (refusal) throw new ApiError(503, refusal, { 'Retry-After': '5' });
    return {
      revision: String(v.version),
      artifact: v.artifact,
      framework: 'mcp',
      limits: MEDIUM,
      env: {
        SVC_API_URL: loopbackBaseUrl(config),
        SVC_PROJECT_ID: server.project_id,
        SVC_PROJECT_KEY: workloadKeyOf(db, server),
        SVC_MCP_AUTH_TOKEN: bearerOf(db, server),
        MCP_SERVER_NAME: server.name,
        MCP_SERVER_VERSION: String(v.version),
        MCP_REQUEST_TIMEOUT_SECONDS: String(config.mcpRequestTimeoutSeconds),
        PLATFORM_REQUEST_TIMEOUT_SECONDS: '300',
      },
    };
  }
}
