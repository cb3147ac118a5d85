import type { ServerResponse } from 'node:http';
import type { Clock } from '../../src/daemon/clock.js';
import type { DataPlane, RevisionReport, ServiceDesired } from '../../src/daemon/services/serverless/plane.js';
import { startTestDaemon, type ApiResponse, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';

/**
 * A data plane that runs nothing and records what the control plane tells it, so control-plane
 * tests can see every apply and play the data plane's reports. Used only by these tests: the
 * daemon always builds the real one.
 */
export class RecordingPlane implements DataPlane {
  readonly applied: ServiceDesired[] = [];
  readonly removed: string[] = [];
  private readonly listeners: Array<(serviceId: string, revision: string, r: RevisionReport) => void> = [];
  private readonly reports = new Map<string, RevisionReport>();

  apply(s: ServiceDesired): void {
    this.applied.push(JSON.parse(JSON.stringify(s)) as ServiceDesired);
  }
  async remove(serviceId: string): Promise<void> {
    this.removed.push(serviceId);
  }
  onReport(cb: (serviceId: string, revision: string, r: RevisionReport) => void): void {
    this.listeners.push(cb);
  }
  report(serviceId: string, revision: string): RevisionReport | undefined {
    return this.reports.get(`${serviceId}/${revision}`);
  }
  /** Plays a report as the real data plane would after a revision's instance answered (or failed). */
  emit(serviceId: string, revision: string, r: RevisionReport): void {
    this.reports.set(`${serviceId}/${revision}`, r);
    for (const l of this.listeners) l(serviceId, revision, r);
  }
  async logs(_serviceId: string, opts: { tail: number; follow: boolean }, res: ServerResponse): Promise<void> {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(`tail=${opts.tail} follow=${opts.follow}\n`);
  }
  instances(serviceId: string): { revision: string; replicas: number; inflight: number }[] {
    return [...this.reports.entries()].filter(([k]) => k.startsWith(`${serviceId}/`)).map(([k, r]) => ({ revision: k.slice(serviceId.length + 1), replicas: r.replicas, inflight: 0 }));
  }
  async stop(): Promise<void> {}
  /** The newest desired state applied for a service. */
  last(serviceId: string): ServiceDesired | undefined {
    return [...this.applied].reverse().find((s) => s.serviceId === serviceId);
  }
}

export interface ControlEnv {
  d: TestDaemon;
  plane: RecordingPlane;
  people: Awaited<ReturnType<typeof cast>>;
  base: string;
  /** Calls as the project member unless a token is given. */
  call(method: string, path: string, body?: unknown, token?: string, headers?: Record<string, string>): Promise<ApiResponse>;
}

export async function controlEnv(overrides: Parameters<typeof startTestDaemon>[0] = {}, home?: string, clock?: Clock): Promise<ControlEnv> {
  const plane = new RecordingPlane();
  const d = await startTestDaemon(overrides, { serverlessPlane: () => plane, home, clock });
  const people = await cast(d);
  const base = `/v1/projects/${people.project.id}/services`;
  return {
    d,
    plane,
    people,
    base,
    call: (method, path, body, token, headers) => d.api(method, `${base}${path}`, { token: token ?? people.member.token, body, headers }),
  };
}

/** The service id the control plane uses in its calls to the data plane (from its table). */
export const serviceId = (d: TestDaemon, projectId: string, name: string) =>
  (d.db.prepare('SELECT id FROM svc_services WHERE project_id = ? AND name = ?').get(projectId, name) as { id: string }).id;

export const ready = (replicas = 1): RevisionReport => ({ state: 'ready', replicas, network: { isolated: true } });
