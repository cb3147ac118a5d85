import type { ServerResponse } from 'node:http';

/**
 * The seam between the serverless control plane (routes, store, revisions, traffic decisions)
 * and the data plane (instances, autoscaling, the Host router, logs). The data plane never reads
 * the control plane's tables: it is told the desired state of each service through `apply` and
 * reports back what each revision does through `onReport` (docs/decisions/serverless.md).
 */

/** One immutable revision as the data plane runs it. */
export interface RevisionTemplate {
  serviceId: string;
  projectId: string;
  projectShort: string;
  service: string;
  /** <service>-00001 */
  revision: string;
  generation: number;
  /** A docker reference, or a source reference `source.platform.local/<short>/sha256-<hex>`. */
  image: string;
  command?: string[];
  args?: string[];
  /** Plain env + env_from values + PLATFORM_REQUEST_TIMEOUT_SECONDS. */
  env: Record<string, string>;
  /** container_port (default 8080). */
  port: number;
  cpus: number;
  memoryBytes: number;
  timeoutSeconds: number;
}

export interface Scaling {
  minScale: number;
  maxScale: number;
  containerConcurrency: number;
}

/** One entry of the split the router serves: percentages of routes of one service sum to 100. */
export interface Route {
  revision: string;
  percent: number;
  tag?: string;
}

export interface RevisionReport {
  state: 'ready' | 'not_ready' | 'unknown';
  reason?: string;
  message?: string;
  replicas: number;
  /**
   * Whether the revision's instances run in their own network namespace behind a door (the
   * VisibilityEnforced condition); `message` says why not. Absent until the data plane decided.
   */
  network?: { isolated: boolean; message?: string };
}

/** Desired state of one service. */
export interface ServiceDesired {
  serviceId: string;
  projectId: string;
  projectShort: string;
  name: string;
  /** Its revisions that may serve (those in the traffic split, and the newest one being readied). */
  revisions: RevisionTemplate[];
  traffic: Route[];
  scaling: Scaling;
  published: boolean;
}

export interface DataPlane {
  /** Desired state of one service: its revisions that may serve, traffic, scaling, publish. Idempotent. */
  apply(s: ServiceDesired): void;
  remove(serviceId: string): Promise<void>;
  /** Called by the data plane whenever a revision's report changes (the control plane persists it). */
  onReport(cb: (serviceId: string, revision: string, r: RevisionReport) => void): void;
  /** What a revision of a service does now. */
  report(serviceId: string, revision: string): RevisionReport | undefined;
  logs(serviceId: string, opts: { tail: number; follow: boolean }, res: ServerResponse): Promise<void>;
  /** Each running revision's instances and the requests they serve now (draining revisions included). */
  instances(serviceId: string): { revision: string; replicas: number; inflight: number }[];
  stop(): Promise<void>;
}
