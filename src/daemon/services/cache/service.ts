import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SIZE_CLASSES, type CacheCreateBody, type CacheStats } from '../../../api/cache.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { ApiError, conflict, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { ProjectNeed } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import { addReservations, instanceRefusal, type Reservation } from '../accounts/quota-use.js';
import { principalKey, type Principal } from '../auth/principal.js';
import type { CacheDriver, LaunchSpec } from './driver.js';
import { RequestDeadline, withTimeout } from './deadline.js';
import { allocatePort } from './ports.js';
import { instancePaths } from './redis-conf.js';
import { writeInstanceFiles } from './instance-files.js';
import { RedisUnreachable, RespError, authedCommand } from './resp.js';
import { statsFromInfo } from './stats.js';
import { SessionKeyWatch } from '../auth/session-key-watch.js';
import { CacheStore, type InstanceRow } from './store.js';
import { Supervisor, type InstanceSpec, type Observation } from './supervisor.js';
import { credentialView, instanceView, resourcePath } from './views.js';

/**
 * A cache's size class names memory only (spec 3): its container memory is request and limit, and
 * it holds no CPU against the project's rows (docs/decisions/cli-small.md).
 */
const reservationOf = (row: InstanceRow): Reservation => {
  const mib = SIZE_CLASSES[row.size_class].limitBytes / 1024 ** 2;
  return { cpu_requests: 0, memory_requests: mib, cpu_limits: 0, memory_limits: mib };
};

const badGateway = (message: string) => new ApiError(502, message);

/**
 * Cache instances (spec 3 §2.2, §3, §4.2): rules and state machine over the store, with the
 * supervisor running one real redis-server per instance.
 */
export class CacheService {
  readonly store: CacheStore;
  readonly supervisor: Supervisor;
  /** Ports handed out but not yet committed, so two concurrent creates cannot share one. */
  private readonly reserved = new Set<number>();
  private readonly deletions = new Map<string, Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly sessionKey: SessionKeyWatch;

  constructor(
    private readonly ctx: AreaContext,
    readonly driver: CacheDriver,
  ) {
    this.store = new CacheStore(ctx.db);
    this.supervisor = new Supervisor({ config: ctx.config.cache, driver, log: ctx.log, onChange: (id, o) => this.observed(id, o), admit: (id) => this.admit(id) });
    this.sessionKey = new SessionKeyWatch(join(this.keysDir, 'signing.key'));
  }

  private get keysDir() {
    return join(this.ctx.config.home, 'keys');
  }

  /**
   * Every route's first step: the session key must load (spec 3 §5: else 503, credentials cannot
   * be verified); the contract already rejected a malformed id with 400 (spec 3 §7); then the 404
   * rule and roles.
   */
  private project(principal: Principal, ref: string, need: ProjectNeed) {
    const keyProblem = this.sessionKey.problem();
    if (keyProblem) throw new ApiError(503, `${keyProblem}; the cache service cannot verify credentials until it loads`);
    return accessProject(this.ctx, principal, ref, need).project;
  }

  private instance(projectId: string, name: string): InstanceRow {
    const row = this.store.byName(projectId, name);
    if (!row) throw notFound(`memorystore ${name} not found`);
    return row;
  }

  launchSpec(row: InstanceRow): LaunchSpec {
    return { id: row.id, paths: instancePaths(this.ctx.config.home, row.id), port: row.port, memoryLimitBytes: SIZE_CLASSES[row.size_class].limitBytes };
  }

  private spec(row: InstanceRow): InstanceSpec {
    return { ...this.launchSpec(row), passwords: row.previous_password ? [row.password, row.previous_password] : [row.password], appendOnly: row.persistence_enabled === 1 };
  }

  private writeFiles(row: InstanceRow, projectShort: string): void {
    writeInstanceFiles({ home: this.ctx.config.home, keysDir: this.keysDir, maxmemoryOverride: this.ctx.config.cache.maxmemoryOverride }, row, projectShort);
  }

  private async allocate(): Promise<number> {
    const port = await allocatePort((p) => this.reserved.has(p) || this.store.portTaken(p));
    this.reserved.add(port);
    return port;
  }

  /** Turns what the supervisor saw into the instance's state (spec 3 §3). */
  private observed(id: string, o: Observation): void {
    const row = this.store.byId(id);
    if (!row || row.state === 'deleting') return;
    if (o.phase === 'up') {
      this.store.setObserved(id, 'ready', null);
      if (!o.password) return;
      this.store.setRunningPassword(id, o.password);
      // Re-adopted a server still running with the pre-rotation password: apply the new one now.
      if (o.password !== row.password) void this.supervisor.restart(this.spec(this.store.byId(id)!), 'restarting to apply the rotated credential');
      return;
    }
    this.store.setObserved(id, row.ever_ready ? 'degraded' : 'provisioning', o.message ?? null);
  }

  /** 502 unless the driver can run servers now, within the request's deadline. */
  private async requireOrchestration(deadline: RequestDeadline, what: string): Promise<void> {
    const orchestration = await deadline.step(what, this.driver.check());
    if (orchestration !== 'ok') throw badGateway(`${what}: ${orchestration}`);
  }

  /** POST create: the row, its files and ports now; the server starts in the background. */
  async create(principal: Principal, ref: string, body: CacheCreateBody, requestId: string) {
    const deadline = new RequestDeadline(this.ctx.config.cache.requestTimeoutMs);
    const project = this.project(principal, ref, 'member');
    if (this.store.byName(project.id, body.name)) throw conflict(`memorystore ${body.name} already exists in this project`);
    // A platform that cannot run servers at all fails the create at once (502), not after it.
    await this.requireOrchestration(deadline, 'provisioning failed');
    const version = body.version.trim();
    if (version) {
      const running = await deadline.step('provisioning failed', this.driver.serverVersion());
      if (!running || !(running === version || running.startsWith(`${version}.`))) {
        throw badGateway(`provisioning failed: server version ${version} is not available on this platform (it runs ${running ?? 'no server'}); leave version blank for the default`);
      }
    }
    const row: InstanceRow = {
      id: newId(),
      project_id: project.id,
      name: body.name,
      size_class: body.size_class,
      version,
      maxmemory_policy: body.maxmemory_policy,
      persistence_enabled: body.persistence.enabled ? 1 : 0,
      persistence_size: body.persistence.size,
      storage_class_name: body.persistence.storage_class_name.trim(),
      external_exposure: body.external_exposure ? 1 : 0,
      port: 0,
      tls_port: null,
      password: randomBytes(24).toString('base64url'),
      previous_password: null,
      state: 'provisioning',
      message: 'waiting for the server to start',
      ever_ready: 0,
      driver: this.driver.name,
      created_at: new Date(this.ctx.clock.now()).toISOString(),
    };
    const ports: number[] = [];
    try {
      try {
        row.port = await this.allocate();
        ports.push(row.port);
        if (row.external_exposure) ports.push((row.tls_port = await this.allocate()));
      } catch (e) {
        throw badGateway(`provisioning failed: ${(e as Error).message}`);
      }
      // A request past its timeout has already answered 502: it must not create anything now.
      deadline.check('provisioning failed');
      tx(this.ctx.db, () => {
        if (this.store.byName(project.id, body.name)) throw conflict(`memorystore ${body.name} already exists in this project`);
        this.store.insert(row);
        writeAudit(this.ctx.db, this.ctx.clock, {
          projectId: project.id,
          actor: principalKey(principal),
          action: 'cache.create',
          target: resourcePath(project.short, row.name),
          details: { size_class: row.size_class, maxmemory_policy: row.maxmemory_policy, external_exposure: Boolean(row.external_exposure), persistence: Boolean(row.persistence_enabled) },
          requestId,
        });
      });
    } finally {
      for (const p of ports) this.reserved.delete(p);
    }
    try {
      this.writeFiles(row, project.short);
    } catch (e) {
      this.store.remove(row.id);
      await rm(instancePaths(this.ctx.config.home, row.id).dir, { recursive: true, force: true });
      throw badGateway(`provisioning failed: ${(e as Error).message}`);
    }
    void this.supervisor.ensure(this.spec(row));
    return {
      memorystore: instanceView(row, project.short),
      credential: credentialView(row),
      note: 'the password is shown only now and on rotation; later reads return only the credential secret name. The instance is ready when ready is true.',
    };
  }

  list(principal: Principal, ref: string, query: PageQuery) {
    const project = this.project(principal, ref, 'member');
    const page = this.ctx.pager.parse(query, `memorystores:${project.id}`);
    const { items, next_page_token } = this.ctx.pager.slice(page, this.store.list(project.id, page.offset, page.size + 1));
    return { memorystores: items.map((r) => instanceView(r, project.short)), ...(next_page_token ? { next_page_token } : {}) };
  }

  get(principal: Principal, ref: string, name: string) {
    const project = this.project(principal, ref, 'member');
    return instanceView(this.instance(project.id, name), project.short);
  }

  /** A point-in-time INFO read within the stats budget (3 s by default). */
  async stats(principal: Principal, ref: string, name: string): Promise<CacheStats> {
    const project = this.project(principal, ref, 'member');
    const row = this.instance(project.id, name);
    if (row.state === 'deleting') throw conflict(`memorystore ${name} is being deleted`);
    if (!row.ever_ready) throw conflict(`memorystore ${name} is not provisioned yet: wait until ready is true`);
    const budget = this.ctx.config.cache.statsBudgetMs;
    const started = Date.now();
    const left = () => budget - (Date.now() - started);
    let info: unknown;
    try {
      // A refused connection or password is retried within the budget: a rotation's planned
      // restart leaves the server down, or holding a password not yet recorded, for a moment.
      for (let pause = 25; ; pause = Math.min(pause * 2, 200)) {
        try {
          info = await this.readInfo(this.store.byId(row.id) ?? row, Math.max(1, left()));
          break;
        } catch (e) {
          const quick = e instanceof RespError || (e instanceof RedisUnreachable && /ECONNREFUSED|ECONNRESET|closed before/.test(e.message));
          if (!quick || left() <= pause) throw e;
          await new Promise((r) => setTimeout(r, pause));
        }
      }
    } catch (e) {
      if (e instanceof RedisUnreachable) throw new ApiError(503, `could not reach the instance: ${e.message}`);
      throw badGateway(`could not read stats: ${(e as Error).message}`);
    }
    if (typeof info !== 'string') throw badGateway('could not read stats: INFO returned no text');
    return {
      memorystore: resourcePath(project.short, name),
      name,
      ...statsFromInfo(info),
      note: 'point-in-time values read from the server with INFO; fields the server did not report are omitted',
    };
  }

  /** INFO with the current password, or the previous one while a rotation's restart is pending. */
  private async readInfo(row: InstanceRow, timeoutMs: number): Promise<unknown> {
    const started = Date.now();
    try {
      return await authedCommand(row.port, row.password, ['INFO'], timeoutMs);
    } catch (e) {
      if (!(e instanceof RespError && row.previous_password)) throw e;
      return authedCommand(row.port, row.previous_password, ['INFO'], Math.max(1, timeoutMs - (Date.now() - started)));
    }
  }

  /** New password now; the restart that applies it starts at once, the old one works until then. */
  async rotate(principal: Principal, ref: string, name: string, requestId: string) {
    const deadline = new RequestDeadline(this.ctx.config.cache.requestTimeoutMs);
    const project = this.project(principal, ref, 'resource-admin');
    const rotatable = (r: InstanceRow) => {
      if (r.state === 'deleting') throw conflict(`memorystore ${name} is being deleted`);
      if (!r.ever_ready) throw conflict(`memorystore ${name} has no credential yet: it is not provisioned; wait until ready is true`);
    };
    const current = this.instance(project.id, name);
    rotatable(current);
    // The restart that applies the password needs the provisioning system: without it, change nothing.
    await this.requireOrchestration(deadline, 'rotation failed');
    deadline.check('rotation failed');
    // Files first, then the commit: a 502 here leaves the stored password and the files as they were.
    const password = randomBytes(24).toString('base64url');
    try {
      this.writeFiles({ ...current, password }, project.short);
    } catch (e) {
      throw badGateway(`rotation failed: ${(e as Error).message}`);
    }
    let row: InstanceRow;
    try {
      row = tx(this.ctx.db, () => {
        const r = this.instance(project.id, name);
        rotatable(r);
        this.store.rotatePassword(r.id, password);
        writeAudit(this.ctx.db, this.ctx.clock, {
          projectId: project.id,
          actor: principalKey(principal),
          action: 'cache.rotate-credential',
          target: resourcePath(project.short, name),
          requestId,
        });
        return this.store.byId(r.id)!;
      });
    } catch (e) {
      // Lost a race (deleted or rotated meanwhile): the files follow the stored row again.
      const now = this.store.byId(current.id);
      if (now && now.state !== 'deleting') {
        try {
          this.writeFiles(now, project.short);
        } catch (restore) {
          this.ctx.log.error('cache rotation: restoring files failed', { id: current.id, error: String(restore) });
        }
      }
      throw e;
    }
    // redis.conf now holds the new password: a crash restart before the planned one must expect it.
    this.supervisor.update(this.spec(row));
    const delay = this.ctx.config.cache.rotateRestartDelayMs;
    const restart = () => void this.supervisor.restart(this.spec(this.store.byId(row.id) ?? row), 'restarting to apply the rotated credential');
    if (delay > 0) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        restart();
      }, delay);
      t.unref();
      this.timers.add(t);
    } else restart();
    return {
      credential: credentialView(row),
      note: 'the new password takes effect when the instance restarts, which has started; the previous password works until then. It is shown only now.',
    };
  }

  /** DELETE: 202 at once; the server, its port and its data go in the background. Irreversible. */
  async delete(principal: Principal, ref: string, name: string, requestId: string) {
    const deadline = new RequestDeadline(this.ctx.config.cache.requestTimeoutMs);
    const project = this.project(principal, ref, 'resource-admin');
    this.instance(project.id, name);
    // Removing the server needs the provisioning system: without it the instance stays as it is (502).
    await this.requireOrchestration(deadline, 'delete failed');
    deadline.check('delete failed');
    const row = tx(this.ctx.db, () => {
      const r = this.instance(project.id, name);
      this.store.markDeleting(r.id);
      writeAudit(this.ctx.db, this.ctx.clock, {
        projectId: project.id,
        actor: principalKey(principal),
        action: 'cache.delete',
        target: resourcePath(project.short, name),
        requestId,
      });
      return r;
    });
    this.finishDelete(row);
    return {
      name,
      resource_path: resourcePath(project.short, name),
      state: 'deleting' as const,
      ready: false as const,
      note: 'the server, its port and its data are being removed; this cannot be undone',
    };
  }

  private finishDelete(row: InstanceRow): Promise<void> {
    const existing = this.deletions.get(row.id);
    if (existing) return existing;
    const work = (async () => {
      try {
        await this.supervisor.remove(row.id, this.launchSpec(row));
        await rm(instancePaths(this.ctx.config.home, row.id).dir, { recursive: true, force: true });
        this.store.remove(row.id);
      } catch (e) {
        this.ctx.log.error('cache delete failed', { id: row.id, error: String(e) });
        this.store.setDeleteFailure(row.id, `delete failed, retried on the next daemon start: ${(e as Error).message}`);
      } finally {
        this.deletions.delete(row.id);
      }
    })();
    this.deletions.set(row.id, work);
    return work;
  }

  /** Daemon start: finish deletions, then re-adopt or restart every instance (state unknown until seen). */
  async start(): Promise<void> {
    const shorts = new Map<string, string>();
    const shortOf = (projectId: string) => {
      if (!shorts.has(projectId)) {
        const p = this.ctx.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(projectId) as { short: string } | undefined;
        shorts.set(projectId, p?.short ?? '');
      }
      return shorts.get(projectId)!;
    };
    const rows = this.store.all();
    // `daemon status` counts the servers coming back (settled: up, or given up on with a message).
    const tick = this.ctx.startup.track('caches', rows.filter((r) => r.state !== 'deleting').length);
    const comingBack: string[] = [];
    for (const stored of rows) {
      // Each instance's bookkeeping (its password opened, its files written) in its own turn of
      // the event loop, so requests already arriving are answered in between.
      await new Promise((resolve) => setImmediate(resolve));
      if (stored.state === 'deleting') {
        void this.finishDelete(stored);
        continue;
      }
      let row: InstanceRow;
      try {
        row = this.store.opened(stored);
      } catch (e) {
        // A sealed secret store: the password cannot be read, so the server cannot be checked or started.
        this.store.setObserved(stored.id, stored.ever_ready ? 'degraded' : 'provisioning', `cannot read the instance password: ${(e as Error).message}`);
        tick();
        continue;
      }
      this.store.setObserved(row.id, 'unknown', 'reconciling after a daemon start');
      try {
        this.writeFiles(row, shortOf(row.project_id));
      } catch (e) {
        this.store.setObserved(row.id, row.ever_ready ? 'degraded' : 'provisioning', `provisioning failed: ${(e as Error).message}`);
        tick();
        continue;
      }
      comingBack.push(row.id);
    }
    void this.bringBack(comingBack, tick);
  }

  /**
   * The servers of a daemon start come back behind it, two at a time: spawning twenty at once
   * held the event loop for the better part of a second under load, and the daemon already
   * answers requests (docs/decisions/speed-daemon.md). A cache deleted meanwhile is skipped; one
   * a request restarted meanwhile is already supervised, so ensure leaves it be.
   */
  private async bringBack(ids: string[], tick: () => void): Promise<void> {
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        try {
          const row = this.store.byId(id);
          if (row && row.state !== 'deleting') await this.supervisor.ensure(this.spec(this.store.opened(row)));
        } catch (e) {
          this.ctx.log.warn('cache instance could not be brought back', { id, error: (e as Error).message });
        } finally {
          tick();
        }
      }
    };
    await Promise.all([worker(), worker()]);
  }

  /**
   * Graceful daemon stop: servers stop with the daemon and save their data first (the next
   * daemon starts them again from it); with stopOnExit off they keep running for re-adoption.
   */
  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all(this.deletions.values());
    await this.supervisor.stopAll(this.ctx.config.cache.stopOnExit);
  }

  /** Readiness of the cache API: 'ok' or the reason per check. */
  async health() {
    const check = (fn: () => void) => {
      try {
        fn();
        return 'ok';
      } catch (e) {
        return (e as Error).message;
      }
    };
    const budget = this.ctx.config.cache.requestTimeoutMs;
    const checks = {
      orchestration: await withTimeout(this.driver.check(), budget, () => new Error(`the provisioning system did not answer within ${budget / 1000} s`)).catch(
        (e: Error) => e.message,
      ),
      memorystore_crd: check(() => this.ctx.db.prepare('SELECT 1 FROM cache_instances LIMIT 1').get()),
      database: check(() => this.ctx.db.prepare('SELECT 1').get()),
      session_key: this.sessionKey.problem() ?? 'ok',
    };
    const ok = Object.values(checks).every((v) => v === 'ok');
    return { status: ok ? ('ok' as const) : ('degraded' as const), checks };
  }

  /** Servers of the project answering now, for the running-instances quota (spec 1 §8.3). */
  runningIn(projectId: string): number {
    return this.store.idsByProject(projectId).filter((id) => this.supervisor.isUp(id)).length;
  }

  /**
   * What the project's answering servers hold against the CPU and memory quotas: the size class's
   * container memory as request and limit, no CPU (docs/decisions/cli-small.md); no proxy
   * stands in front of a cache server.
   */
  reservedIn(projectId: string): Reservation {
    const up = this.store.idsByProject(projectId).filter((id) => this.supervisor.isUp(id));
    return addReservations(up.flatMap((id) => {
      const row = this.store.byId(id);
      return row ? [reservationOf(row)] : [];
    }));
  }

  /** The quotas' word on starting this server: a refusal keeps it down with the numbers, tried again later. */
  private admit(id: string): string | undefined {
    const row = this.store.byId(id);
    return row ? instanceRefusal(this.ctx, row.project_id, reservationOf(row)) : undefined;
  }

  /** Count for the project-deletion guard. */
  dependents(projectId: string): string | undefined {
    const n = this.store.countByProject(projectId);
    return n ? `${n} cache instance${n === 1 ? '' : 's'}` : undefined;
  }
}
