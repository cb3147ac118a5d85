/**
 * The seam between the serverless control plane (routes, store, revisions, conditions) and the
 * data plane (instances, autoscaling, routing, logs). Written as in the shared design.
 */
export interface RevisionTemplate {
  serviceId: string;
  projectId: string;
  projectShort: string;
  service: string;
  revision: string; // <service>-00001
  generation: number;
  image: string; // docker reference, or a source reference
  command?: string[];
  args?: string[];
  env: Record<string, string>; // plain env + env_from values + PLATFORM_REQUEST_TIMEOUT_SECONDS
  port: number; // container_port (default 8080)
  cpus: number;
  memoryBytes: number;
  timeoutSeconds: number;
}
export interface Scaling {
  minScale: number;
  maxScale: number;
  containerConcurrency: number;
}
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
}
export interface DataPlane {
  /** Desired state of one service: its revisions that may serve, traffic, scaling, publish. Idempotent. */
  apply(s: {
    serviceId: string;
    projectId: string;
    projectShort: string;
    name: string;
    revisions: RevisionTemplate[];
    traffic: Route[];
    scaling: Scaling;
    published: boolean;
  }): void;
  remove(serviceId: string): Promise<void>;
  /** Called by the data plane whenever a revision's report changes (the control plane persists it). */
  onReport(cb: (serviceId: string, revision: string, r: RevisionReport) => void): void;
  report(revision: string): RevisionReport | undefined;
  logs(serviceId: string, opts: { tail: number; follow: boolean }, res: import('node:http').ServerResponse): Promise<void>;
  instances(serviceId: string): { revision: string; replicas: number }[];
  stop(): Promise<void>;
}
