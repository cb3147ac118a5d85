import { randomBytes } from 'node:crypto';
import type { LogLine } from '../../api/agents.js';
import type { Driver, RunningInstance } from './driver.js';
import { waitHealthy } from './health.js';
import { INSTANCE_SECRET_ENV, instanceHeaders, newInstanceSecret } from './instance-secret.js';
import { LogCapture } from './log-capture.js';
import type { PortAllocator } from './ports.js';

/** What it takes to start one instance of a workload's current revision. */
export interface LaunchPlan {
  revision: string;
  artifact: string;
  framework: string;
  runtime?: string;
  env: Record<string, string>;
  limits?: { cpus: number; memoryBytes: number };
}

export interface SupervisorHooks {
  /** The revision that should serve now (cheap: called on every request). */
  currentRevision(key: string): string | undefined;
  /** Everything needed to start that revision; throws (for example a quota refusal) to refuse the start. */
  plan(key: string, revision: string | undefined): Promise<LaunchPlan>;
  /** Persists a line; false when the store is behind and refuses it (never for `force` lines). */
  log(key: string, line: LogLine, force: boolean): boolean;
  /** An instance exited without being asked to. */
  crashed(key: string, message: string): void;
  instanceStarted(key: string, info: { id: string; revision: string; pid?: number; container?: string; port: number }): void;
  instanceStopped(key: string, id: string): void;
  /** An instance answered its first health check, `ms` after its launch began (the cold-start metric). */
  ready?(key: string, ms: number): void;
}

export interface SupervisorOptions {
  idleMs: number;
  startTimeoutMs: number;
  restartBackoffMs: number;
}

interface Live {
  id: string;
  port: number;
  /** Sent with every request to the instance; the shim answers nothing without it. */
  secret: string;
  revision: string;
  /** What it was started with (its instance size), for the CPU and memory quotas. */
  limits?: LaunchPlan['limits'];
  run: RunningInstance;
  logs: LogCapture;
  stopping: boolean;
  /** Set once /healthz answered: an exit before that is a failed start, not a crash. */
  healthy: boolean;
  startedAt: number;
  /** The slot that owns it now: a deploy's new revision starts in a pinned slot and is promoted. */
  slot: Slot;
}

interface Slot {
  key: string;
  /** Set on a slot that runs one revision whatever serves by default (a traffic split's other targets). */
  pinned?: string;
  live?: Live;
  starting?: Promise<Live>;
  lastUsed: number;
  inflight: number;
  crashes: number;
  restartTimer?: NodeJS.Timeout;
  removed: boolean;
}

const MAX_BACKOFF_MS = 30_000;
/** A pinned slot's map key: NUL never occurs in a workload id or a revision name. */
const slotId = (key: string, pinned?: string) => (pinned === undefined ? key : `${key}\0${pinned}`);
/** After this many failed restarts in a row the supervisor waits for the next request instead. */
const MAX_EAGER_RESTARTS = 6;

/**
 * Runs workloads on scale-to-zero instances (DESIGN.md): the first request starts an instance
 * and waits for it, an instance idle for `idleMs` stops, a crashed one restarts with doubling
 * backoff and its crash reaches the logs. One instance serves a workload at a time; a new
 * revision replaces the old instance on the next request. A traffic split asks for other
 * revisions by name: each gets a pinned slot of its own, with the same lifecycle.
 */
export class Supervisor {
  private readonly slots = new Map<string, Slot>();
  /** Every instance this daemon started and has not seen exit, whatever its slot thinks. */
  private readonly running = new Set<Live>();
  private closed = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly driver: Driver,
    private readonly ports: PortAllocator,
    private readonly opts: SupervisorOptions,
    private readonly hooks: SupervisorHooks,
  ) {
    this.sweeper = setInterval(() => this.sweepIdle(), Math.max(50, Math.min(1000, opts.idleMs / 4)));
    this.sweeper.unref();
  }

  /**
   * Gets a serving instance (cold-starting one if needed) and marks the workload busy until
   * `release`; of `revision` when given (a traffic split's pick), else of the current one.
   */
  async acquire(key: string, revision?: string): Promise<{ port: number; instance: string; revision: string; headers: Record<string, string>; release(): void }> {
    // The serving revision is read once per acquire, for the slot and for what it must run.
    const current = this.hooks.currentRevision(key);
    const slot = this.slot(key, revision !== undefined && revision !== current ? revision : undefined);
    slot.inflight++;
    slot.lastUsed = Date.now();
    try {
      const live = await this.ensure(slot, slot.pinned ?? current);
      let released = false;
      return {
        port: live.port,
        instance: live.id,
        revision: live.revision,
        headers: instanceHeaders(live.secret),
        release: () => {
          if (released) return;
          released = true;
          slot.inflight--;
          slot.lastUsed = Date.now();
        },
      };
    } catch (e) {
      slot.inflight--;
      throw e;
    }
  }

  /** Starts an instance of a revision now (deploy step; default: the serving one) and returns its id. */
  async warm(key: string, revision?: string): Promise<string> {
    const slot = this.slotFor(key, revision);
    slot.lastUsed = Date.now();
    return (await this.ensure(slot, slot.pinned ? undefined : revision)).id;
  }

  /** The instance serving now (the current revision's first, else a pinned one's), for live logs; undefined when scaled to zero. */
  live(key: string): LogCapture | undefined {
    const l = [this.slots.get(key), ...this.pinnedSlots(key)].map((s) => s?.live).find((x) => x && !x.stopping);
    return l?.logs;
  }

  /** One entry per running instance: a workload running several revisions appears once for each. */
  runningKeys(): string[] {
    return [...this.slots.values()].filter((s) => s.live && !s.live.stopping).map((s) => s.key);
  }

  /** As runningKeys, with the limits each instance was started with (the CPU and memory quotas). */
  runningInstances(): Array<{ key: string; limits?: LaunchPlan['limits'] }> {
    return [...this.slots.values()].flatMap((s) => (s.live && !s.live.stopping ? [{ key: s.key, limits: s.live.limits }] : []));
  }

  /** Stops every instance of a workload and forgets it (delete). */
  async remove(key: string): Promise<void> {
    const slots = [this.slots.get(key), ...this.pinnedSlots(key)].filter((s): s is Slot => s !== undefined);
    await Promise.all(
      slots.map(async (slot) => {
        slot.removed = true;
        clearTimeout(slot.restartTimer);
        this.slots.delete(slotId(slot.key, slot.pinned));
        await slot.starting?.catch(() => undefined);
        if (slot.live) await this.stop(slot.live, 'workload deleted');
      }),
    );
  }

  /**
   * Stops the idle instances of revisions no longer in `keep` (a split that gives them 0 %): pinned
   * slots are forgotten, the current revision's slot starts again on its next request. An instance
   * with requests in flight finishes them and is left to the idle sweep.
   */
  async retire(key: string, keep: readonly string[], why: string): Promise<void> {
    const slots = [this.slots.get(key), ...this.pinnedSlots(key)].filter((s): s is Slot => s !== undefined);
    await Promise.all(
      slots.map(async (slot) => {
        const live = slot.live;
        if (!live || live.stopping || keep.includes(live.revision) || slot.inflight > 0) return;
        slot.live = undefined;
        clearTimeout(slot.restartTimer);
        if (slot.pinned) this.slots.delete(slotId(slot.key, slot.pinned));
        await this.stop(live, why);
      }),
    );
  }

  /**
   * A deploy's last step (blue-green): the new revision, started and healthy in a pinned slot while
   * the previous one kept serving, becomes the workload's own instance and the previous instance
   * stops. `commit` records the switch (false: no longer wanted); it runs in the same tick as the swap, so no request sees
   * the new revision as current while the old instance still holds the slot. False (nothing
   * committed) when there is no healthy instance of it left to promote.
   */
  async promote(key: string, revision: string, why: string, commit: () => boolean): Promise<boolean> {
    const main = this.slot(key);
    // A cold start of the previous revision in flight would land after the swap and be orphaned.
    await main.starting?.catch(() => undefined);
    const pinned = this.slots.get(slotId(key, revision));
    const fresh = pinned?.live;
    if (!pinned || !fresh || fresh.stopping || fresh.revision !== revision || main.starting || !commit()) return false;
    this.slots.delete(slotId(key, revision));
    clearTimeout(main.restartTimer);
    main.crashes = 0;
    main.lastUsed = Date.now();
    const old = main.live;
    main.live = fresh;
    fresh.slot = main;
    if (old && old !== fresh) await this.stop(old, why);
    return true;
  }

  /** Stops the current instance so the next request starts the newest revision with its settings. */
  async recycle(key: string, why: string): Promise<void> {
    const slot = this.slots.get(key);
    if (slot) await this.recycleSlot(slot, why);
  }

  /** As recycle, for the current revision's slot and every pinned one. */
  async recycleAll(key: string, why: string): Promise<void> {
    const slots = [this.slots.get(key), ...this.pinnedSlots(key)].filter((s): s is Slot => s !== undefined);
    await Promise.all(slots.map((slot) => this.recycleSlot(slot, why)));
  }

  private async recycleSlot(slot: Slot, why: string): Promise<void> {
    clearTimeout(slot.restartTimer);
    slot.crashes = 0;
    await slot.starting?.catch(() => undefined);
    const live = slot.live;
    slot.live = undefined;
    if (live) await this.stop(live, why);
  }

  /**
   * Daemon stop: stops every instance this daemon started, at once and in parallel, including
   * ones still starting or being replaced (a starting one would otherwise hold the stop for its
   * whole health wait and a replaced one would be nobody's); later launches are refused.
   */
  async stopAll(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const slot of this.slots.values()) {
      slot.removed = true;
      clearTimeout(slot.restartTimer);
    }
    this.slots.clear();
    await Promise.all([...this.running].map((live) => this.stop(live, 'the daemon is stopping')));
    process.off('exit', this.killOnExit);
  }

  /**
   * Last resort when the daemon exits before stopAll finished (its stop deadline passed): the
   * process groups of instances still running are killed synchronously, so none outlives it.
   * Containers are left to the next start's reap (stopping one needs the engine, asynchronously).
   */
  private readonly killOnExit = () => {
    for (const live of this.running) {
      if (!live.run.pid) continue;
      try {
        process.kill(-live.run.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };

  /** The current revision runs in the workload's own slot; any other asked-for revision in a pinned one. */
  private slotFor(key: string, revision: string | undefined): Slot {
    const pinned = revision !== undefined && revision !== this.hooks.currentRevision(key) ? revision : undefined;
    return this.slot(key, pinned);
  }

  private pinnedSlots(key: string): Slot[] {
    return [...this.slots.values()].filter((s) => s.key === key && s.pinned !== undefined);
  }

  private slot(key: string, pinned?: string): Slot {
    const id = slotId(key, pinned);
    let s = this.slots.get(id);
    if (!s) {
      s = { key, pinned, lastUsed: Date.now(), inflight: 0, crashes: 0, removed: false };
      this.slots.set(id, s);
    }
    return s;
  }

  private async ensure(slot: Slot, want = slot.pinned ?? this.hooks.currentRevision(slot.key)): Promise<Live> {
    const live = slot.live;
    if (live && !live.stopping && live.revision === want) return live;
    if (live && live.revision !== want) {
      slot.live = undefined;
      void this.stop(live, `replaced by revision ${want}`);
    }
    if (!slot.starting) {
      slot.starting = this.launch(slot, want).finally(() => (slot.starting = undefined));
    }
    return slot.starting;
  }

  private async launch(slot: Slot, revision: string | undefined): Promise<Live> {
    if (this.closed) throw new Error('the daemon is stopping');
    const launched = performance.now();
    const plan = await this.hooks.plan(slot.key, revision);
    const port = await this.ports.take();
    const id = `${plan.revision}-${randomBytes(3).toString('hex')}`;
    const logs = new LogCapture(id, plan.revision, (line, force) => this.hooks.log(slot.key, line, force));
    const secret = newInstanceSecret();
    let run: RunningInstance;
    try {
      const env = { ...plan.env, [INSTANCE_SECRET_ENV]: secret };
      run = await this.driver.start({ instanceId: id, artifact: plan.artifact, framework: plan.framework, runtime: plan.runtime, port, env, limits: plan.limits });
    } catch (e) {
      this.ports.release(port);
      throw e;
    }
    if (this.closed) {
      this.ports.release(port);
      await run.stop();
      throw new Error('the daemon is stopping');
    }
    logs.attach(run.stdout, 'stdout');
    logs.attach(run.stderr, 'stderr');
    logs.push('system', `instance ${id} starting on 127.0.0.1:${port}`);
    const live: Live = { id, port, secret, revision: plan.revision, limits: plan.limits, run, logs, stopping: false, healthy: false, startedAt: Date.now(), slot };
    if (this.running.size === 0) process.on('exit', this.killOnExit);
    this.running.add(live);
    this.hooks.instanceStarted(slot.key, { id, revision: plan.revision, pid: run.pid, container: run.container, port });
    void run.exited.then((r) => this.exited(live.slot, live, r));
    try {
      await waitHealthy(port, instanceHeaders(secret), this.opts.startTimeoutMs, run.exited);
    } catch (e) {
      const tail = logs
        .lines()
        .filter((l) => l.stream !== 'system')
        .slice(-20)
        .map((l) => l.message)
        .join('\n');
      await this.stop(live, 'failed to start');
      throw new Error(`${(e as Error).message}${tail ? `\n${asSourcePaths(tail, plan.artifact)}` : ''}`);
    }
    live.healthy = true;
    this.hooks.ready?.(slot.key, performance.now() - launched);
    logs.push('system', `instance ${id} ready`);
    if (slot.removed) {
      await this.stop(live, 'workload deleted');
      throw new Error('the workload was deleted');
    }
    slot.live = live;
    return live;
  }

  private exited(slot: Slot, live: Live, r: { code: number | null; signal: string | null }): void {
    this.running.delete(live);
    if (this.running.size === 0) process.off('exit', this.killOnExit);
    this.ports.release(live.port);
    this.hooks.instanceStopped(slot.key, live.id);
    const how = r.signal ? `signal ${r.signal}` : `exit code ${r.code}`;
    if (live.stopping || !live.healthy) {
      if (!live.stopping) live.logs.push('system', `instance ${live.id} exited before it was ready (${how})`);
      live.logs.close();
      return;
    }
    const message = `instance ${live.id} crashed (${how})`;
    if (Date.now() - live.startedAt > 60_000) slot.crashes = 0;
    slot.crashes++;
    const delay = Math.min(MAX_BACKOFF_MS, this.opts.restartBackoffMs * 2 ** (slot.crashes - 1));
    const eager = slot.crashes <= MAX_EAGER_RESTARTS;
    live.logs.push('system', `${message}; ${eager ? `restarting in ${delay} ms` : 'restarting on the next request'}`);
    live.logs.close();
    if (slot.live === live) slot.live = undefined;
    this.hooks.crashed(slot.key, `${message} at ${new Date().toISOString()}; ${eager ? 'restarted with backoff' : 'restarts on the next request'}`);
    if (slot.removed || !eager) return;
    clearTimeout(slot.restartTimer);
    slot.restartTimer = setTimeout(() => {
      if (slot.removed || slot.live || slot.starting) return;
      this.ensure(slot).catch(() => undefined);
    }, delay);
    slot.restartTimer.unref();
  }

  private async stop(live: Live, why: string): Promise<void> {
    if (live.stopping) return;
    live.stopping = true;
    live.logs.push('system', `instance ${live.id} stopping: ${why}`);
    await live.run.stop();
  }

  private sweepIdle(): void {
    const now = Date.now();
    for (const slot of this.slots.values()) {
      const live = slot.live;
      if (!live || live.stopping || slot.inflight > 0) continue;
      if (now - slot.lastUsed >= this.opts.idleMs) {
        slot.live = undefined;
        void this.stop(live, `scaled to zero after ${Math.round((now - slot.lastUsed) / 1000)} s idle`);
      }
    }
  }
}

/**
 * A failed start's output as its author reads it: paths relative to the uploaded source, not under
 * the daemon's state directory, and the Node shim's `.mjs` twin of index.js named index.js.
 */
export function asSourcePaths(output: string, artifact: string): string {
  return output
    .replaceAll(`file://${artifact}/`, '')
    .replaceAll(`${artifact}/`, '')
    .replaceAll('.platform-index.mjs', 'index.js');
}
