import { appsLabel } from '../../../public-address.js';
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { WorkloadConfig } from '../../../config.js';
import { loadUndici } from '../../../lazy/modules.js';
import { ApiError } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/router.js';
import { formatLogLine } from '../../../runtime/log-capture.js';
import { sharedPorts } from '../../../runtime/ports.js';
import type { Logger } from '../../../logger.js';
import type { DataPlane, RevisionReport, RevisionTemplate, ServiceDesired } from '../plane.js';
import { Bridge } from './bridge.js';
import { Doors } from './doors.js';
import { parseEgressAllow } from '../../../egress.js';
import { forward, UpstreamFailure } from './forward.js';
import { Launcher, type SourceReader } from './launcher.js';
import { Ledger } from './ledger.js';
import { effectiveScaling, RevisionPool, type Instance } from './pool.js';
import { Splitter } from '../../../traffic/splitter.js';

export interface DataPlaneOptions {
  home: string;
  workloads: WorkloadConfig;
  /** Reads an uploaded source folder (the control plane stores them). */
  readSource?: SourceReader;
  log?: Logger;
  /** How long an instance may take to listen on its port (default: the deploy timeout, at most 30 s). */
  startTimeoutMs?: number;
  /** How long a request may wait for a free instance (tests; default in pool.ts). */
  queueWaitMs?: number;
  /**
   * The daemon's main and internal listener ports, which isolated instances reach as
   * 127.0.0.1:<port> through their door; 0 while the daemon does not listen yet.
   */
  platformPorts: () => number[];
  /** Told when an instance became ready, `ms` after its launch (the cold-start metric). */
  instanceReady?: (ms: number) => void;
  /** Why one more instance of this revision may not start now (the project's quotas); undefined admits it. */
  admit?: (t: RevisionTemplate) => string | undefined;
  /** The apps domain public addresses are under (`<name>-<short>.<domain>`); default apps.localhost. */
  appsDomain?: string;
}

interface Service {
  desired: ServiceDesired;
  pools: Map<string, RevisionPool>;
  splitter: Splitter;
  tags: Map<string, string>;
}

/** A follower that has this much unsent is too slow to keep: its stream ends saying so. */
const FOLLOW_BACKLOG_BYTES = 1024 * 1024;

/**
 * The serverless data plane (docs/decisions/serverless.md, Data plane): runs each service's
 * revisions as autoscaled pools of instances, routes requests by Host (public and tag addresses)
 * and by path (the internal form), serves live logs and reports each revision's readiness to the
 * control plane. It keeps no table: what it runs comes from `apply`, what it left running after a
 * crash from its ledger and container labels, reaped before anything new starts.
 */
export class ServerlessDataPlane implements DataPlane {
  private readonly services = new Map<string, Service>();
  /** Pools of revisions that left the desired state, finishing their in-flight requests. */
  private readonly draining = new Set<RevisionPool>();
  /** project short -> service name -> service id: the routers' lookup. */
  private readonly names = new Map<string, Map<string, string>>();
  private readonly listeners: Array<(serviceId: string, revision: string, r: RevisionReport) => void> = [];
  private readonly launcher: Launcher;
  private readonly ledger: Ledger;
  private readonly doors: Doors;
  private readonly bridge: Bridge;
  private listening?: Promise<number[]>;
  private readonly reaped: Promise<void>;
  private readonly sweeper: NodeJS.Timeout;
  private dispatcher?: Dispatcher;
  private stopped = false;

  constructor(private readonly o: DataPlaneOptions) {
    this.doors = new Doors(o.home);
    const allow = parseEgressAllow(o.workloads.egressAllow);
    this.bridge = new Bridge(o.home, () => ({ platformPorts: o.platformPorts(), allow }));
    this.launcher = new Launcher(o.home, o.workloads, o.readSource, { doors: this.doors, bridge: this.bridge, platformPorts: () => this.platformPorts() });
    this.ledger = new Ledger(o.home);
    this.launcher.beforeContainer = () => this.ledger.markDocker();
    this.reaped = this.reap();
    const idle = o.workloads.idleMs;
    this.sweeper = setInterval(() => this.tick(), Math.max(50, Math.min(1000, idle / 4)));
    this.sweeper.unref();
  }

  /** Resolves once the previous daemon's leftovers are gone (tests wait on it). */
  whenReaped(): Promise<void> {
    return this.reaped;
  }

  apply(s: ServiceDesired): void {
    if (this.stopped) return;
    let svc = this.services.get(s.serviceId);
    if (!svc) {
      svc = { desired: s, pools: new Map(), splitter: new Splitter(s.traffic), tags: new Map() };
      this.services.set(s.serviceId, svc);
    }
    const old = svc.desired;
    if (old.projectShort !== s.projectShort || old.name !== s.name) this.unname(old);
    svc.desired = s;
    let byName = this.names.get(s.projectShort);
    if (!byName) this.names.set(s.projectShort, (byName = new Map()));
    byName.set(s.name, s.serviceId);
    const splitter = new Splitter(s.traffic);
    if (!splitter.sameAs(svc.splitter)) svc.splitter = splitter;
    svc.tags = new Map(s.traffic.filter((r) => r.tag).map((r) => [r.tag!, r.revision]));
    const scaling = effectiveScaling(s.scaling);
    const wanted = new Set(s.revisions.map((r) => r.revision));
    for (const [name, pool] of svc.pools) {
      // Revisions are immutable: a template that differs (a re-created service) is a new pool.
      const t = s.revisions.find((r) => r.revision === name);
      if (!wanted.has(name) || (t && JSON.stringify(t) !== JSON.stringify(pool.t))) {
        svc.pools.delete(name);
        // Requests in flight finish (for at most the revision's timeout), as Knative drains.
        this.draining.add(pool);
        void pool.close(wanted.has(name) ? 'the revision was replaced' : 'the revision no longer takes traffic', pool.t.timeoutSeconds * 1000).finally(() => this.draining.delete(pool));
      }
    }
    const routed = new Set(s.traffic.filter((r) => r.percent > 0 || r.tag).map((r) => r.revision));
    for (const t of s.revisions) {
      let pool = svc.pools.get(t.revision);
      const fresh = !pool;
      if (!pool) {
        const serviceId = s.serviceId;
        const revision = t.revision;
        pool = new RevisionPool(t, {
          launcher: this.launcher,
          ports: sharedPorts(this.o.workloads),
          doors: this.doors,
          sharedDispatcher: () => this.pool(),
          doorDispatcher: (socketPath) => new (loadUndici().Pool)('http://localhost', { socketPath, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000 }),
          ledger: this.ledger,
          idleMs: this.o.workloads.idleMs,
          startTimeoutMs: this.o.startTimeoutMs ?? Math.min(this.o.workloads.deployTimeoutMs, 30_000),
          restartBackoffMs: this.o.workloads.restartBackoffMs,
          queueWaitMs: this.o.queueWaitMs,
          reaped: this.reaped,
          changed: (r) => this.emit(serviceId, revision, r),
          instanceReady: this.o.instanceReady,
          admit: this.o.admit,
        });
        svc.pools.set(t.revision, pool);
      }
      pool.scaling = scaling;
      pool.routable = routed.has(t.revision);
      // The first report is the verdict (ready or not_ready): a daemon restart re-verifies every
      // revision without flapping what the control plane stored to unknown meanwhile.
      if (fresh) pool.verify();
      pool.tick(Date.now());
    }
  }

  async remove(serviceId: string): Promise<void> {
    const svc = this.services.get(serviceId);
    if (!svc) return;
    this.services.delete(serviceId);
    this.unname(svc.desired);
    await Promise.all([...svc.pools.values()].map((p) => p.close('the service was deleted')));
  }

  onReport(cb: (serviceId: string, revision: string, r: RevisionReport) => void): void {
    this.listeners.push(cb);
  }

  /** What a revision of a service does now (names repeat across services, so both are given). */
  report(serviceId: string, revision: string): RevisionReport | undefined {
    return this.services.get(serviceId)?.pools.get(revision)?.report();
  }

  instances(serviceId: string): { revision: string; replicas: number; inflight: number }[] {
    // Draining revisions still run (and count) until their last request finishes.
    const pools = [...(this.services.get(serviceId)?.pools.values() ?? []), ...[...this.draining].filter((p) => p.t.serviceId === serviceId)];
    return pools.map((p) => ({ revision: p.t.revision, replicas: p.replicas(), inflight: p.inflight() }));
  }

  /**
   * Live logs of the newest running instance (spec 2 §4.3): the last `tail` lines, then with
   * `follow` every new line until the instance stops, which ends the stream with
   * `[log stream ended: <reason>]`.
   */
  async logs(serviceId: string, opts: { tail: number; follow: boolean }, res: ServerResponse): Promise<void> {
    const svc = this.services.get(serviceId);
    const inst = svc ? newest([...svc.pools.values()].flatMap((p) => p.instances)) : undefined;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    if (!inst) {
      res.end(`service ${svc?.desired.name ?? serviceId} is scaled to zero: no instance is running, so there are no live logs; the next request starts one\n`);
      return;
    }
    const lines = inst.logs.lines().slice(-Math.max(1, opts.tail));
    res.write(lines.map(formatLogLine).join(''));
    if (!opts.follow) {
      res.end();
      return;
    }
    res.flushHeaders();
    await new Promise<void>((resolve) => {
      let done = false;
      const finish = (why?: string) => {
        if (done) return;
        done = true;
        unsubscribe();
        if (why && !res.destroyed) res.end(`[log stream ended: ${why}]\n`);
        resolve();
      };
      const unsubscribe = inst.logs.follow(
        (line) => {
          if (res.writableLength > FOLLOW_BACKLOG_BYTES) return finish('the reader fell behind by more than 1 MiB');
          res.write(formatLogLine(line));
        },
        () => finish(`instance ${inst.id} stopped`),
      );
      res.once('close', () => finish());
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    const all = [...this.services.values()].flatMap((s) => [...s.pools.values()]).concat([...this.draining]);
    this.services.clear();
    this.names.clear();
    await Promise.all(all.map((p) => p.close('the daemon is stopping')));
    await this.dispatcher?.close().catch(() => undefined);
    await this.reaped.catch(() => undefined);
    await this.bridge.stop();
  }

  /** The Host router's question: is this a public or tag address of a published service here? */
  matchesHost(host: string): boolean {
    return this.resolveHost(host) !== undefined;
  }

  /** Serves a request that arrived on a public or tag address (the Host router). */
  async serveHost(ctx: RequestContext): Promise<void> {
    const target = this.resolveHost(String(ctx.req.headers.host ?? ''));
    if (!target) throw new ApiError(404, `no service answers at ${ctx.req.headers.host}`);
    await this.serve(ctx, target.serviceId, target.tag, ctx.req.url ?? '/');
  }

  /** `/services/<short>/<name>` (or `<tag>-<name>`) on the internal listener. */
  matchesPath(path: string): boolean {
    return this.resolvePath(path) !== undefined;
  }

  async servePath(ctx: RequestContext, internal: boolean): Promise<void> {
    const url = ctx.req.url ?? '/';
    const target = internal ? this.resolvePath(url.split('?', 1)[0]!) : undefined;
    if (!target) throw new ApiError(404, `no route for ${ctx.req.method ?? 'GET'} ${url.split('?', 1)[0]}: a service's internal address answers only on the internal listener`);
    const rest = url.slice(target.prefix.length);
    await this.serve(ctx, target.serviceId, target.tag, rest.startsWith('/') ? rest : `/${rest}`, target.prefix);
  }

  private async serve(ctx: RequestContext, serviceId: string, tag: string | undefined, path: string, prefix?: string): Promise<void> {
    const svc = this.services.get(serviceId);
    if (!svc) throw new ApiError(404, 'no such service');
    const revision = tag ? svc.tags.get(tag) : svc.splitter.next();
    const pool = revision ? svc.pools.get(revision) : undefined;
    if (!pool) {
      throw new ApiError(503, `service ${svc.desired.name} has no ready revision to serve${tag ? ` tag ${tag}` : ''} yet`, { 'Retry-After': '2' });
    }
    const target = { path, prefix, timeoutSeconds: pool.t.timeoutSeconds, label: `service ${svc.desired.name} (revision ${pool.t.revision})` };
    const bodyless = ctx.req.headers['transfer-encoding'] === undefined && !Number(ctx.req.headers['content-length'] ?? 0);
    for (let attempt = 0; ; attempt++) {
      const inst = await pool.acquire();
      try {
        await forward(inst.dispatcher!, inst.origin, ctx.req, ctx.res, ctx.ip, target);
        return;
      } catch (e) {
        if (!(e instanceof UpstreamFailure)) throw e;
        // The instance is gone or going: no new request goes to it until its port answers again.
        pool.suspect(inst);
        // A refused connection reached nothing: a request without a body is safe to send once more.
        if (!e.refused || !bodyless || attempt > 0) throw e;
      } finally {
        pool.release(inst);
      }
    }
  }

  private pool(): Dispatcher {
    return (this.dispatcher ??= new (loadUndici().Agent)({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000 }));
  }

  /** `<name>-<short>.<apps domain>[:port]` or `<tag>-<name>-<short>...` of a published service. */
  private resolveHost(host: string): { serviceId: string; tag?: string } | undefined {
    const label = appsLabel(host, this.o.appsDomain ?? 'apps.localhost');
    const m = label === undefined ? null : /^([a-z0-9-]+)-([a-z][a-z0-9]{5})$/.exec(label);
    if (!m) return undefined;
    const t = this.lookup(m[2]!.toLowerCase(), m[1]!.toLowerCase());
    return t && this.services.get(t.serviceId)?.desired.published ? t : undefined;
  }

  private resolvePath(path: string): { serviceId: string; tag?: string; prefix: string } | undefined {
    const m = /^\/services\/([a-z][a-z0-9]{5})\/([a-z0-9-]+)(?:\/|$)/.exec(path);
    if (!m) return undefined;
    const t = this.lookup(m[1]!, m[2]!);
    return t && { ...t, prefix: `/services/${m[1]}/${m[2]}` };
  }

  /** A service by exact name, else `<tag>-<name>` with the longest existing name and a tag it has. */
  private lookup(short: string, label: string): { serviceId: string; tag?: string } | undefined {
    const byName = this.names.get(short);
    if (!byName) return undefined;
    const exact = byName.get(label);
    if (exact) return { serviceId: exact };
    let best: { serviceId: string; tag: string; len: number } | undefined;
    for (let i = label.indexOf('-'); i > 0; i = label.indexOf('-', i + 1)) {
      const name = label.slice(i + 1);
      const id = byName.get(name);
      if (id && (!best || name.length > best.len)) best = { serviceId: id, tag: label.slice(0, i), len: name.length };
    }
    if (!best || !this.services.get(best.serviceId)?.tags.has(best.tag)) return undefined;
    return { serviceId: best.serviceId, tag: best.tag };
  }

  private unname(d: ServiceDesired): void {
    const byName = this.names.get(d.projectShort);
    if (byName?.get(d.name) === d.serviceId) byName.delete(d.name);
  }

  /** Reports reach listeners a microtask later: a listener may call apply, never inside apply itself. */
  private emit(serviceId: string, revision: string, r: RevisionReport): void {
    queueMicrotask(() => this.deliver(serviceId, revision, r));
  }

  private deliver(serviceId: string, revision: string, r: RevisionReport): void {
    for (const cb of this.listeners) {
      try {
        cb(serviceId, revision, r);
      } catch (e) {
        this.o.log?.warn('serverless report listener failed', { error: String(e) });
      }
    }
  }

  private tick(): void {
    const now = Date.now();
    for (const svc of this.services.values()) for (const p of svc.pools.values()) p.tick(now);
  }

  /**
   * The daemon's ports once it listens (the data plane starts before its listeners, and a
   * revision applied at start-up launches at once): checked every 10 ms, for at most 10 s.
   */
  private platformPorts(): Promise<number[]> {
    return (this.listening ??= (async () => {
      for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
        const ports = this.o.platformPorts();
        if (ports.every((p) => p > 0)) return ports;
      }
      throw new Error('the daemon did not start listening within 10 s');
    })());
  }

  /**
   * Start-up: stops what a previous daemon of this state directory left (its ledger with the
   * doors it ran, then labelled containers), empties the doors' directory and opens the bridge.
   */
  private async reap(): Promise<void> {
    const docker = this.launcher.dockerDriver.bind(this.launcher);
    for (const e of this.ledger.entries()) {
      try {
        if (e.doorPid) killGroup(e.doorPid);
        if (e.driver === 'docker') await docker().reap({ container: e.container });
        else await this.launcher.process.reap({ id: e.id, pid: e.pid });
      } catch (err) {
        this.o.log?.warn('could not reap a serverless instance', { instance: e.id, error: String(err) });
      }
      this.ledger.remove(e.id);
    }
    this.doors.empty();
    try {
      await this.bridge.start();
    } catch (err) {
      // Isolated instances then reach nothing outside their namespace; everything else works.
      this.o.log?.error('the serverless bridge could not listen', { path: this.bridge.path, error: String(err) });
    }
    if (!this.ledger.usedDocker()) return;
    try {
      for (const id of await this.launcher.leftoverContainers()) await docker().reap({ container: id });
    } catch (err) {
      this.o.log?.warn('could not list leftover serverless containers', { error: String(err) });
    }
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** The newest instance that serves (started last). */
function newest(all: Instance[]): Instance | undefined {
  let best: Instance | undefined;
  for (const i of all) if (i.ready && !i.stopping && (!best || i.startedAt > best.startedAt)) best = i;
  return best;
}
