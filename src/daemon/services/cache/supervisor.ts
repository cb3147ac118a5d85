import type { CacheConfig } from './config.js';
import type { Logger } from '../../logger.js';
import { tail, type CacheDriver, type LaunchSpec, type ServerHandle } from './driver.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pingWithPassword, redisPipeline } from './resp.js';

export interface InstanceSpec extends LaunchSpec {
  /** Passwords the running server may accept, newest first (a rotation in flight adds the old one). */
  passwords: string[];
  /** Persistence on: the append-only file holds the data; off: a daemon stop saves a snapshot. */
  appendOnly: boolean;
}

/** What the supervisor saw; the service turns it into the instance's state and message. */
export interface Observation {
  phase: 'starting' | 'up' | 'down';
  message?: string;
  /** The password the running server accepts (set when up). */
  password?: string;
}

export interface SupervisorDeps {
  config: CacheConfig;
  driver: CacheDriver;
  log: Logger;
  onChange(id: string, o: Observation): void;
  /** Why a launch may not start now (the project's quotas, spec 1 §8.3); undefined admits it. */
  admit?(id: string): string | undefined;
}

const PING_TIMEOUT_MS = 1000;
const STOP_GRACE_MS = 5000;
/** Consecutive failed probes of a live process before it is killed and restarted. */
const MAX_FAILED_PINGS = 3;
const MAX_BACKOFF_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Keeps one instance's server running: adopt or launch, wait for an authenticated PING, watch
 * the process and probe it, restart with exponential backoff after a crash. Operations on one
 * instance are serialised through a promise chain so a restart never overlaps a stop.
 */
class Runner {
  private handle?: ServerHandle;
  private phase: Observation['phase'] = 'starting';
  private password?: string;
  private stopped = false;
  private chain: Promise<void> = Promise.resolve();
  private busy = false;
  /** A probe can outlast the interval (a hung server); never run two at once. */
  private probing = false;
  private attempts = 0;
  private upSince = 0;
  private failedPings = 0;
  private restartTimer?: NodeJS.Timeout;
  private readonly monitor: NodeJS.Timeout;
  /** The last spec handed to update or restart: specs arrive newest last. */
  private newest?: InstanceSpec;
  /** Every password redis.conf held since the running launch began: the server read one of them. */
  private launchPasswords?: Set<string>;

  constructor(
    private spec: InstanceSpec,
    private readonly deps: SupervisorDeps,
  ) {
    this.monitor = setInterval(() => void this.probe(), deps.config.healthIntervalMs);
    this.monitor.unref();
  }

  get isUp(): boolean {
    return this.phase === 'up';
  }

  /** Queues an operation after the ones in flight. */
  private run(fn: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stopped) return;
      this.busy = true;
      try {
        await fn();
      } catch (e) {
        this.deps.log.error('cache supervisor operation failed', { id: this.spec.id, error: String(e) });
      } finally {
        this.busy = false;
      }
    });
    return this.chain;
  }

  private report(o: Observation): void {
    this.phase = o.phase;
    if (this.stopped) return;
    // Reports also come from timers and exit events: a failure here must never become an
    // unhandled rejection that takes the daemon down.
    try {
      this.deps.onChange(this.spec.id, o);
    } catch (e) {
      this.deps.log.error('cache state update failed', { id: this.spec.id, error: String(e) });
    }
  }

  /** First start in this daemon: re-adopt a server left running by an earlier daemon, else launch. */
  boot(): Promise<void> {
    return this.run(async () => {
      const found = await this.deps.driver.find(this.spec);
      if (found) {
        for (const pw of this.spec.passwords) {
          if (await pingWithPassword(this.spec.port, pw, PING_TIMEOUT_MS)) {
            this.handle = found;
            this.deps.log.info('cache instance re-adopted', { id: this.spec.id, pid: found.pid });
            return this.up(pw);
          }
        }
        // Running but not answering with a known password: replace it.
        await this.deps.driver.stop(found, STOP_GRACE_MS);
      }
      await this.launch();
    });
  }

  /**
   * Asks the server to save and exit (SHUTDOWN SAVE; SHUTDOWN with the append-only file, which
   * redis fsyncs on the way out) and waits for it, so the next daemon starts it with its data.
   */
  private async shutdownSaving(h: ServerHandle): Promise<void> {
    if (this.phase !== 'up' || !this.password) return;
    await redisPipeline('127.0.0.1', this.spec.port, [['AUTH', 'default', this.password], this.spec.appendOnly ? ['SHUTDOWN'] : ['SHUTDOWN', 'SAVE']], STOP_GRACE_MS).catch(
      () => undefined, // the server closes the connection instead of answering SHUTDOWN
    );
    const deadline = Date.now() + STOP_GRACE_MS;
    while (Date.now() < deadline && (await this.deps.driver.alive(h))) await sleep(20);
  }

  private async launch(message = 'starting the server'): Promise<void> {
    this.report({ phase: 'starting', message });
    // Refused like any workload's instance: down with the numbers, tried again with the backoff.
    const refusal = this.deps.admit?.(this.spec.id);
    if (refusal) return this.fail(refusal);
    const { driver, config } = this.deps;
    let handle: ServerHandle;
    try {
      handle = await driver.launch(this.spec);
    } catch (e) {
      return this.fail(`provisioning failed: ${(e as Error).message}`);
    }
    this.handle = handle;
    let exitedWith: string | undefined;
    void handle.exited?.then((why) => {
      exitedWith = why;
      if (this.handle === handle) void this.crashed(handle, why);
    });
    const startedWith = this.spec.passwords[0]!;
    this.launchPasswords = new Set([startedWith]);
    const deadline = Date.now() + config.startTimeoutMs;
    while (!this.stopped && Date.now() < deadline) {
      if (exitedWith) {
        this.handle = undefined;
        const why = (await tail(this.spec.paths.stderr)) || (await tail(this.spec.paths.log));
        return this.fail(`provisioning failed: ${exitedWith} during start${why ? `: ${why}` : ''}`);
      }
      // The server holds the password redis.conf had when it read it: the one this start began
      // with, or any a rotation wrote into the file meanwhile (the newest is tried first).
      for (const password of new Set([this.spec.passwords[0]!, ...this.launchPasswords])) {
        if (await pingWithPassword(this.spec.port, password, PING_TIMEOUT_MS)) return this.up(password);
      }
      await sleep(25);
    }
    if (this.stopped) return;
    this.handle = undefined;
    await driver.stop(handle, STOP_GRACE_MS);
    this.fail(`provisioning failed: the server did not answer PING within ${config.startTimeoutMs} ms`);
  }

  private up(password: string): void {
    // The snapshot a daemon stop saved is loaded once the server answers: without persistence a
    // later crash must start empty (as any restart of such an instance does), not from it.
    if (!this.spec.appendOnly) void rm(join(this.spec.paths.data, 'dump.rdb'), { force: true }).catch(() => undefined);
    this.password = password;
    this.upSince = Date.now();
    this.failedPings = 0;
    this.report({ phase: 'up', password });
  }

  /** Marks the instance down and schedules a restart: base backoff doubling, capped at 30 s. */
  private fail(message: string): void {
    this.deps.log.warn('cache instance down', { id: this.spec.id, message });
    // A server that stayed up a while earns a fresh backoff; a crash loop keeps doubling.
    if (this.upSince && Date.now() - this.upSince > 30_000) this.attempts = 0;
    this.upSince = 0;
    const delay = Math.min(this.deps.config.restartBackoffMs * 2 ** this.attempts, MAX_BACKOFF_MS);
    this.attempts++;
    this.report({ phase: 'down', message: `${message}; restarting in ${Math.round(delay)} ms` });
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.run(() => this.launch('restarting the server')), delay);
    this.restartTimer.unref();
  }

  private async crashed(handle: ServerHandle, why: string): Promise<void> {
    if (this.stopped || this.handle !== handle || this.phase !== 'up') return;
    this.handle = undefined;
    this.fail(`${why} unexpectedly`);
  }

  /** Periodic probe of a running server (also catches re-adopted processes, which cannot be awaited). */
  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      await this.probeOnce();
    } finally {
      this.probing = false;
    }
  }

  private async probeOnce(): Promise<void> {
    if (this.stopped || this.busy || this.phase !== 'up' || !this.handle) return;
    const handle = this.handle;
    if (!(await this.deps.driver.alive(handle))) {
      if (this.handle === handle && this.phase === 'up') {
        this.handle = undefined;
        this.fail('the server is not running');
      }
      return;
    }
    if (await pingWithPassword(this.spec.port, this.password!, PING_TIMEOUT_MS)) {
      this.failedPings = 0;
      return;
    }
    if (++this.failedPings < MAX_FAILED_PINGS || this.busy || this.handle !== handle) return;
    await this.run(async () => {
      if (this.handle !== handle) return;
      this.handle = undefined;
      await this.deps.driver.stop(handle, 0);
      this.fail(`the server stopped answering PING (${MAX_FAILED_PINGS} probes)`);
    });
  }

  /**
   * New settings for the next start (a rotated password now in redis.conf): any launch from here
   * on, a crash restart included, waits for PING with the new password.
   */
  update(spec: InstanceSpec): void {
    this.spec = spec;
    this.newest = spec;
    this.launchPasswords?.add(spec.passwords[0]!);
  }

  /**
   * Planned restart with new settings (a rotated password): stop the old server, start the new.
   * Restarts wait their turn; when one runs, the newest spec received wins over the one it was
   * queued with (a later rotation's), so a start never expects a password redis.conf no longer holds.
   */
  restart(spec: InstanceSpec, message: string): Promise<void> {
    this.newest = spec;
    this.launchPasswords?.add(spec.passwords[0]!);
    return this.run(async () => {
      this.spec = this.newest ?? spec;
      clearTimeout(this.restartTimer);
      this.report({ phase: 'starting', message });
      const old = this.handle;
      this.handle = undefined;
      if (old) await this.deps.driver.stop(old, STOP_GRACE_MS);
      this.attempts = 0;
      await this.launch(message);
    });
  }

  /**
   * Stops supervising; `kill` also stops the server (delete, or daemon stop with stopOnExit),
   * `save` first has it save its data (daemon stop).
   */
  async stop(kill: boolean, save = false): Promise<void> {
    clearInterval(this.monitor);
    clearTimeout(this.restartTimer);
    const pending = this.chain;
    this.stopped = true;
    await pending;
    const h = this.handle;
    this.handle = undefined;
    if (kill && h) {
      if (save) await this.shutdownSaving(h);
      await this.deps.driver.stop(h, STOP_GRACE_MS);
    }
  }
}

/** All instance runners of this daemon. */
export class Supervisor {
  private readonly runners = new Map<string, Runner>();
  /** Set by stopAll: a late timer (a delayed rotation restart) must not start anything. */
  private closed = false;

  constructor(private readonly deps: SupervisorDeps) {}

  /** Starts supervising an instance (re-adopting its server when one is still running). */
  ensure(spec: InstanceSpec): Promise<void> {
    if (this.closed || this.runners.has(spec.id)) return Promise.resolve();
    const r = new Runner(spec, this.deps);
    this.runners.set(spec.id, r);
    return r.boot();
  }

  isUp(id: string): boolean {
    return this.runners.get(id)?.isUp ?? false;
  }

  update(spec: InstanceSpec): void {
    this.runners.get(spec.id)?.update(spec);
  }

  restart(spec: InstanceSpec, message: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    const r = this.runners.get(spec.id);
    return r ? r.restart(spec, message) : this.ensure(spec);
  }

  /** Stops the instance's server and forgets it. */
  async remove(id: string, spec?: LaunchSpec): Promise<void> {
    const r = this.runners.get(id);
    this.runners.delete(id);
    if (r) await r.stop(true);
    // A server this daemon never supervised (left over from a crash) is found through its pid file.
    if (spec) {
      const stray = await this.deps.driver.find(spec);
      if (stray) await this.deps.driver.stop(stray, STOP_GRACE_MS);
    }
  }

  async stopAll(kill: boolean): Promise<void> {
    this.closed = true;
    const all = [...this.runners.values()];
    this.runners.clear();
    await Promise.all(all.map((r) => r.stop(kill, kill)));
  }
}
