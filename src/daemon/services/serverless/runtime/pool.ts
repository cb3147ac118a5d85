import { randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { ApiError } from '../../../http/errors.js';
import type { RunningInstance } from '../../../runtime/driver.js';
import { LogCapture } from '../../../runtime/log-capture.js';
import type { PortAllocator } from '../../../runtime/ports.js';
import type { RevisionReport, RevisionTemplate, Scaling } from '../plane.js';
import type { DoorDir, Doors } from './doors.js';
import { LaunchFailure, type Launcher, type NetworkPlan } from './launcher.js';
import type { Ledger } from './ledger.js';
import { accepts, doorSaysListening, PortError, waitListening } from './probe.js';

/** Spec 2 §4.3: container_concurrency 0 means the serverless default, the table's 80. */
export const DEFAULT_CONCURRENCY = 80;
/** Spec 2 §4.3: max_scale 0 or negative behaves as 10. */
export const DEFAULT_MAX_SCALE = 10;
/** A revision's condition reason when the project's instance, CPU or memory quotas refuse an instance. */
export const INSTANCE_QUOTA_REASON = 'InstanceQuotaExceeded';
/** Lines a live view keeps per instance: the spec's largest tail. */
const KEEP_LINES = 10_000;

export interface PoolEnv {
  launcher: Launcher;
  ports: PortAllocator;
  doors: Doors;
  /** The keep-alive pool shared by instances on host ports. */
  sharedDispatcher(): Dispatcher;
  /** An isolated instance's own pool over its door.sock (closed when it stops). */
  doorDispatcher(socketPath: string): Dispatcher;
  ledger: Ledger;
  idleMs: number;
  startTimeoutMs: number;
  restartBackoffMs: number;
  /** How long a request may wait for a free instance (default: the start timeout plus 5 s, at most timeout_seconds). */
  queueWaitMs?: number;
  /** Waits for the start-up reap of a previous daemon's leftovers before the first launch. */
  reaped: Promise<void>;
  changed(r: RevisionReport): void;
  /** An instance became ready, `ms` after it was launched (the cold-start metric). */
  instanceReady?(ms: number): void;
  /** Why one more instance may not start now (the project's quotas, spec 1 §8.3); undefined admits it. */
  admit?(t: RevisionTemplate): string | undefined;
}

export interface Instance {
  id: string;
  /** Its host port; 0 behind a door. */
  port: number;
  /** Its own network namespace's door (isolated instances). */
  door?: DoorDir;
  /** Where requests go: `origin` over `dispatcher` (set once started). */
  dispatcher?: Dispatcher;
  origin: string;
  run?: RunningInstance;
  logs: LogCapture;
  inflight: number;
  lastUsed: number;
  startedAt: number;
  ready: boolean;
  /** Set once it was ready: an exit after that is a crash, not a failed start. */
  served: boolean;
  stopping: boolean;
}

interface Waiter {
  resolve(i: Instance): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export const effectiveScaling = (s: Scaling) => ({
  min: Math.max(0, s.minScale),
  max: s.maxScale > 0 ? s.maxScale : DEFAULT_MAX_SCALE,
  cc: s.containerConcurrency > 0 ? s.containerConcurrency : DEFAULT_CONCURRENCY,
});

/**
 * The instances of one revision, autoscaled as Knative's KPA with its activator does it in one
 * process (docs/decisions/serverless.md, Data plane): a request goes to the ready instance with
 * the fewest in-flight requests below container_concurrency; when every instance is full and
 * fewer than max_scale run, one more starts and the request waits in a bounded queue; an instance
 * idle for the scale-to-zero window stops unless it is one of the min_scale kept warm (only a
 * revision that takes traffic or has a tag keeps them, as Knative's min-scale).
 */
export class RevisionPool {
  readonly instances: Instance[] = [];
  private readonly waiters: Waiter[] = [];
  private state: RevisionReport = { state: 'unknown', reason: 'Deploying', message: 'the first instance is starting', replicas: 0 };
  private failure?: { at: number; count: number; error: LaunchFailure };
  private restartTimer?: NodeJS.Timeout;
  private closed = false;
  /** Set while a closing pool drains: called as in-flight requests finish. */
  private drained?: () => void;
  private plan?: Promise<NetworkPlan>;
  private network?: RevisionReport['network'];
  scaling = effectiveScaling({ minScale: 0, maxScale: 0, containerConcurrency: 0 });
  routable = false;

  constructor(
    readonly t: RevisionTemplate,
    private readonly env: PoolEnv,
  ) {}

  report(): RevisionReport {
    return this.withNetwork(this.state);
  }

  /** Ready instances now (a revision's replicas). */
  /** Requests being served by its instances now. */
  inflight(): number {
    return this.instances.reduce((n, i) => n + i.inflight, 0);
  }

  replicas(): number {
    return this.instances.filter((i) => i.ready && !i.stopping).length;
  }

  /** Starts the first instance so the revision's readiness is known before it takes traffic (Knative's initial scale of 1). */
  verify(): void {
    if (this.live().length === 0) void this.launch().catch(() => undefined);
  }

  /** A ready instance with room for one more request; waits (bounded) for one, scaling up. */
  acquire(): Promise<Instance> {
    if (this.closed) return Promise.reject(new ApiError(503, `revision ${this.t.revision} is no longer served`, { 'Retry-After': '1' }));
    const free = this.pick();
    if (free) return Promise.resolve(this.take(free));
    const bound = Math.max(100, this.scaling.max * this.scaling.cc);
    if (this.waiters.length >= bound) {
      return Promise.reject(new ApiError(503, `revision ${this.t.revision} is at capacity: ${this.replicas()} instances of at most ${this.scaling.max}, ${this.waiters.length} requests already waiting`, { 'Retry-After': '1' }));
    }
    if (this.failure && !this.live().length && Date.now() - this.failure.at < this.backoff()) {
      return Promise.reject(this.unavailable(this.failure.error));
    }
    const waitMs = this.env.queueWaitMs ?? Math.min(this.t.timeoutSeconds * 1000, this.env.startTimeoutMs + 5000);
    const p = new Promise<Instance>((resolve, reject) => {
      const w: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.dropWaiter(w);
          reject(new ApiError(503, `revision ${this.t.revision} had no free instance within ${+(waitMs / 1000).toFixed(1)} s (${this.replicas()} of at most ${this.scaling.max} running, container_concurrency ${this.scaling.cc})`, { 'Retry-After': '1' }));
        }, waitMs),
      };
      this.waiters.push(w);
    });
    this.scaleUp();
    return p;
  }

  release(i: Instance): void {
    i.inflight--;
    i.lastUsed = Date.now();
    if (this.closed) this.drained?.();
    else this.dispatch();
  }

  /**
   * A request to the instance failed before any answer: it takes no new request until its port is
   * checked; one that no longer accepts connections is stopped (its exit may not be seen yet).
   */
  suspect(i: Instance): void {
    if (!i.ready || i.stopping) return;
    i.ready = false;
    // A dying process may close a connection a moment before its listening socket: give its exit
    // a moment to be seen before asking the port.
    let gone = false;
    void Promise.race([i.run?.exited.then(() => (gone = true)), new Promise((r) => setTimeout(r, 250))])
      .then(() => (gone || i.stopping ? true : this.listening(i)))
      .then((ok) => {
        if (gone || i.stopping) return;
        if (!ok) return void this.stopInstance(i, 'it stopped accepting connections on its port');
        i.ready = true;
        this.dispatch();
      });
  }

  /** Periodic: idle instances above the floor stop; the floor is kept warm. */
  tick(now: number): void {
    if (this.closed) return;
    const floor = this.routable ? this.scaling.min : 0;
    const live = this.live();
    let keep = live.length;
    // Oldest-used first: the instances that took requests most recently stay.
    for (const i of [...live].sort((a, b) => a.lastUsed - b.lastUsed)) {
      if (keep <= floor) break;
      if (!i.ready || i.inflight > 0 || now - i.lastUsed < this.env.idleMs) continue;
      keep--;
      void this.stopInstance(i, keep === 0 ? `scaled to zero after ${Math.round((now - i.lastUsed) / 1000)} s idle` : 'scaled down: idle');
    }
    if (keep < floor && !this.restartTimer && (!this.failure || now - this.failure.at >= this.backoff())) {
      for (let n = keep; n < floor; n++) void this.launch().catch(() => undefined);
    }
  }

  /**
   * Stops every instance and fails waiting requests (the revision left the desired state, or the
   * daemon stops). With `drainMs`, as Knative drains a revision that leaves the split, requests
   * already in flight finish first (for at most that long); nothing new is taken meanwhile.
   */
  async close(why: string, drainMs = 0): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new ApiError(503, `revision ${this.t.revision} is no longer served: ${why}`, { 'Retry-After': '1' }));
    }
    if (drainMs > 0 && this.instances.some((i) => i.inflight > 0)) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs).unref();
        this.drained = () => {
          if (this.instances.some((i) => i.inflight > 0)) return;
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await Promise.all(this.instances.map((i) => this.stopInstance(i, why)));
  }

  /** Instances starting or serving (not stopping). */
  private live(): Instance[] {
    return this.instances.filter((i) => !i.stopping);
  }

  private pick(): Instance | undefined {
    let best: Instance | undefined;
    for (const i of this.instances) {
      if (!i.ready || i.stopping || i.inflight >= this.scaling.cc) continue;
      if (!best || i.inflight < best.inflight) best = i;
    }
    return best;
  }

  private take(i: Instance): Instance {
    i.inflight++;
    i.lastUsed = Date.now();
    return i;
  }

  private dispatch(): void {
    while (this.waiters.length) {
      const i = this.pick();
      if (!i) break;
      const w = this.waiters.shift()!;
      clearTimeout(w.timer);
      w.resolve(this.take(i));
    }
    if (this.waiters.length) this.scaleUp();
  }

  /** One more instance per container_concurrency waiting requests not covered by instances already starting. */
  private scaleUp(): void {
    if (this.closed) return;
    const starting = this.instances.filter((i) => !i.ready && !i.stopping).length;
    let uncovered = this.waiters.length - starting * this.scaling.cc;
    while (uncovered > 0 && this.live().length < this.scaling.max) {
      void this.launch().catch(() => undefined);
      uncovered -= this.scaling.cc;
    }
  }

  private dropWaiter(w: Waiter): void {
    const at = this.waiters.indexOf(w);
    if (at >= 0) this.waiters.splice(at, 1);
  }

  private backoff(): number {
    return Math.min(30_000, this.env.restartBackoffMs * 2 ** Math.max(0, (this.failure?.count ?? 1) - 1));
  }

  private unavailable(e: LaunchFailure): ApiError {
    return new ApiError(503, `revision ${this.t.revision} is not ready: ${e.message}`.slice(0, 4000), { 'Retry-After': '2' });
  }

  private setReport(next: RevisionReport): void {
    const s = this.state;
    if (s.state === next.state && s.reason === next.reason && s.message === next.message && s.replicas === next.replicas) return;
    this.state = next;
    this.env.changed(this.withNetwork(next));
  }

  private withNetwork(r: RevisionReport): RevisionReport {
    return this.network ? { ...r, network: { ...this.network } } : { ...r };
  }

  /** Whether the instance's server accepts connections: its door asks inside its namespace. */
  private listening(i: Instance): Promise<boolean> {
    return i.door ? doorSaysListening(i.door.probe) : accepts(i.port);
  }

  private readyReport(): void {
    this.setReport({ state: 'ready', replicas: this.replicas() });
  }

  /** Starts one instance and waits until its port answers; resolves once it serves. */
  private async launch(): Promise<Instance> {
    const id = `${this.t.revision}-${randomBytes(3).toString('hex')}`;
    const logs = new LogCapture(id, this.t.revision, () => true, { keepLines: KEEP_LINES, keepChars: 8 * 1024 * 1024 });
    const inst: Instance = { id, port: 0, origin: '', logs, inflight: 0, lastUsed: Date.now(), startedAt: Date.now(), ready: false, served: false, stopping: false };
    this.instances.push(inst);
    try {
      await this.env.reaped;
      if (this.closed) throw new LaunchFailure('Stopped', 'the revision is no longer served');
      // Not admitted by the quotas every area's instances fill: not ready with the numbers, tried again after the backoff.
      const refusal = this.env.admit?.(this.t);
      if (refusal) throw new LaunchFailure(INSTANCE_QUOTA_REASON, refusal);
      const plan = await (this.plan ??= this.env.launcher.network(this.t));
      this.network = plan.isolated ? { isolated: true } : { isolated: false, message: plan.message };
      if (this.closed || inst.stopping) throw new LaunchFailure('Stopped', 'the revision is no longer served');
      if (plan.isolated) {
        inst.door = this.env.doors.make(id);
        logs.push('system', `instance ${id} starting in its own network namespace on port ${this.t.port}`);
      } else {
        inst.port = await this.env.ports.take();
        logs.push('system', `instance ${id} starting on 127.0.0.1:${inst.port}`);
      }
      let started;
      try {
        started = await this.env.launcher.start(this.t, id, inst.door ? { door: inst.door } : { port: inst.port }, (line) => logs.push('system', line));
      } catch (e) {
        if (e instanceof LaunchFailure) throw e;
        throw new LaunchFailure('StartFailed', `instance ${id} could not start: ${(e as Error).message}`);
      }
      const run = started.run;
      inst.run = run;
      this.env.ledger.add({ id, driver: started.driver, pid: run.pid, container: run.container, doorPid: started.doorPid });
      if (inst.door) {
        inst.dispatcher = this.env.doorDispatcher(inst.door.sock);
        inst.origin = 'http://localhost';
      } else {
        inst.dispatcher = this.env.sharedDispatcher();
        inst.origin = `http://127.0.0.1:${inst.port}`;
      }
      logs.attach(run.stdout, 'stdout');
      logs.attach(run.stderr, 'stderr');
      void run.exited.then((r) => this.exited(inst, r));
      if (this.closed || inst.stopping) throw new LaunchFailure('Stopped', 'the revision is no longer served');
      const port = inst.door ? this.t.port : inst.port;
      try {
        await waitListening(() => this.listening(inst), this.env.startTimeoutMs, run.exited);
      } catch (e) {
        if (inst.stopping) throw new LaunchFailure('Stopped', 'the revision is no longer served');
        // The output arrives through the streams a moment after an exit: give it a turn.
        await new Promise((r) => setTimeout(r, 50));
        const tail = this.tail(inst);
        if (e instanceof PortError && e.kind === 'exited') {
          const code = await run.exited;
          throw new LaunchFailure(code.signal ? `Signal${code.signal}` : `ExitCode${code.code}`, `the container exited (${code.signal ? `signal ${code.signal}` : `exit code ${code.code}`}) before it listened on port ${port} ($PORT)${tail}`);
        }
        throw new LaunchFailure('ProgressDeadlineExceeded', `the container did not listen on port ${port} ($PORT) within ${Math.round(this.env.startTimeoutMs / 1000)} s${tail}`);
      }
    } catch (e) {
      const failure = e instanceof LaunchFailure ? e : new LaunchFailure('StartFailed', (e as Error).message);
      logs.push('system', `instance ${id} failed to start: ${failure.message}`);
      await this.stopInstance(inst, 'failed to start');
      if (failure.reason !== 'Stopped') this.failed(failure);
      throw failure;
    }
    inst.ready = true;
    inst.served = true;
    inst.lastUsed = Date.now();
    this.failure = undefined;
    this.env.instanceReady?.(Date.now() - inst.startedAt);
    logs.push('system', `instance ${id} ready`);
    this.readyReport();
    this.dispatch();
    return inst;
  }

  /** The last lines of an instance's own output, for a failure's message. */
  private tail(inst: Instance): string {
    const lines = inst.logs
      .lines()
      .filter((l) => l.stream !== 'system')
      .slice(-10)
      .map((l) => l.message);
    return lines.length ? `; last output:\n${lines.join('\n')}` : '; it wrote no output';
  }

  private failed(e: LaunchFailure): void {
    this.failure = { at: Date.now(), count: (this.failure?.count ?? 0) + 1, error: e };
    if (this.replicas() > 0) return;
    this.setReport({ state: 'not_ready', reason: e.reason, message: e.message, replicas: 0 });
    // Nothing left that could serve the waiting requests: they learn why now.
    if (!this.live().length) for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(this.unavailable(e));
    }
  }

  /** What an instance held besides its process: its host port, or its door's directory and pool. */
  private releaseEndpoint(inst: Instance): void {
    if (inst.port) this.env.ports.release(inst.port);
    if (inst.door) {
      this.env.doors.remove(inst.door);
      void inst.dispatcher?.destroy().catch(() => undefined);
    }
  }

  private exited(inst: Instance, r: { code: number | null; signal: string | null }): void {
    this.releaseEndpoint(inst);
    this.env.ledger.remove(inst.id);
    const at = this.instances.indexOf(inst);
    if (at >= 0) this.instances.splice(at, 1);
    const wasReady = inst.served;
    inst.ready = false;
    if (!inst.stopping && wasReady) {
      const how = r.signal ? `signal ${r.signal}` : `exit code ${r.code}`;
      inst.logs.push('system', `instance ${inst.id} crashed (${how})`);
      // Below the floor: a restart after the backoff (tick does it); requests cold-start one anyway.
      if (!this.closed && this.routable && this.replicas() < this.scaling.min) {
        clearTimeout(this.restartTimer);
        this.restartTimer = setTimeout(() => {
          this.restartTimer = undefined;
          this.tick(Date.now());
        }, this.env.restartBackoffMs);
        this.restartTimer.unref();
      }
    }
    inst.logs.close();
    if (this.state.state === 'ready') this.readyReport();
    // A serving instance gone: its waiting requests need another. A failed start says so itself (launch).
    if (wasReady && this.waiters.length) this.scaleUp();
  }

  private async stopInstance(inst: Instance, why: string): Promise<void> {
    if (inst.stopping) return;
    inst.stopping = true;
    const wasReady = inst.ready;
    inst.ready = false;
    inst.logs.push('system', `instance ${inst.id} stopping: ${why}`);
    if (wasReady && this.state.state === 'ready') this.readyReport();
    if (!inst.run) {
      // Never started (a failed pull or build): nothing to wait for.
      this.releaseEndpoint(inst);
      const at = this.instances.indexOf(inst);
      if (at >= 0) this.instances.splice(at, 1);
      inst.logs.close();
      return;
    }
    await inst.run.stop();
    await inst.run.exited;
  }
}
