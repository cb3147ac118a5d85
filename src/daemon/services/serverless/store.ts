import type { Condition, EnvFrom, Resources, ServiceState, TrafficTarget } from '../../../api/serverless.js';
import { stmt, type Db } from '../../store/db.js';

/** The write fields of a service as stored, defaults applied (spec 2 §4.3). */
export interface StoredSpec {
  image: string;
  command?: string[];
  args?: string[];
  env: Record<string, string>;
  env_from: EnvFrom[];
  ports: Array<{ name: string; container_port: number }>;
  resources: Resources;
  scaling: { min_scale: number; max_scale: number; container_concurrency: number };
  publish: { enabled: boolean; host?: string };
  traffic: TrafficTarget[];
  runtime_class_name: string;
  service_account_name: string;
  timeout_seconds: number;
}

/** The part of the spec a revision snapshots: changing any of it creates a revision (spec 2 §9). */
export type Template = Pick<StoredSpec, 'image' | 'command' | 'args' | 'env' | 'env_from' | 'ports' | 'resources' | 'timeout_seconds' | 'runtime_class_name'>;

export interface ServiceRow {
  id: string;
  project_id: string;
  name: string;
  spec: string;
  generation: number;
  observed_generation: number;
  latest_created: string;
  next_seq: number;
  conditions: string;
  state: ServiceState;
  message: string;
  state_changed_at: string;
  invalid: string;
  created_at: string;
  updated_at: string;
}

export interface RevisionRow {
  service_id: string;
  name: string;
  seq: number;
  generation: number;
  template: string;
  secret_env: string;
  state: 'ready' | 'not_ready' | 'unknown';
  reason: string;
  message: string;
  replicas: number;
  ready_at: string | null;
  created_at: string;
  /** JSON `{isolated, message?}` as the data plane reported, '' before it did. */
  network: string;
}

export const specOf = (s: ServiceRow) => JSON.parse(s.spec) as StoredSpec;
export const conditionsOf = (s: ServiceRow) => JSON.parse(s.conditions) as Condition[];

/** The reason of a revision refused by the Services quota: it holds no entry and never runs. */
export const QUOTA_REASON = 'ServiceQuotaExceeded';

export const serverlessStore = {
  byName: (db: Db, projectId: string, name: string) =>
    stmt(db, 'SELECT * FROM svc_services WHERE project_id = ? AND name = ?').get(projectId, name) as ServiceRow | undefined,
  byId: (db: Db, id: string) => stmt(db, 'SELECT * FROM svc_services WHERE id = ?').get(id) as ServiceRow | undefined,
  all: (db: Db) => stmt(db, 'SELECT * FROM svc_services ORDER BY created_at').all() as ServiceRow[],
  /** One page by name (an immutable unique key per project), fetched with limit + 1 for the pager. */
  list: (db: Db, projectId: string, limit: number, offset: number) =>
    stmt(db, 'SELECT * FROM svc_services WHERE project_id = ? ORDER BY name LIMIT ? OFFSET ?').all(projectId, limit, offset) as ServiceRow[],
  ids: (db: Db, projectId: string) => (stmt(db, 'SELECT id FROM svc_services WHERE project_id = ?').all(projectId) as Array<{ id: string }>).map((r) => r.id),
  revisionCount: (db: Db, projectId: string) =>
    (stmt(db, 'SELECT COUNT(*) AS n FROM svc_revisions r JOIN svc_services s ON s.id = r.service_id WHERE s.project_id = ? AND r.reason != ?').get(projectId, QUOTA_REASON) as { n: number }).n,
  countInProject: (db: Db, projectId: string) =>
    (stmt(db, 'SELECT COUNT(*) AS n FROM svc_services WHERE project_id = ?').get(projectId) as { n: number }).n,
  insert(db: Db, s: ServiceRow): void {
    stmt(
      db,
      `INSERT INTO svc_services (id, project_id, name, spec, generation, observed_generation, latest_created, next_seq, conditions, state, message, state_changed_at, invalid, created_at, updated_at)
       VALUES (@id, @project_id, @name, @spec, @generation, @observed_generation, @latest_created, @next_seq, @conditions, @state, @message, @state_changed_at, @invalid, @created_at, @updated_at)`,
    ).run(s);
  },
  update(db: Db, s: ServiceRow): void {
    stmt(
      db,
      `UPDATE svc_services SET spec = @spec, generation = @generation, observed_generation = @observed_generation, latest_created = @latest_created,
       next_seq = @next_seq, conditions = @conditions, state = @state, message = @message, state_changed_at = @state_changed_at, invalid = @invalid,
       updated_at = @updated_at WHERE id = @id`,
    ).run(s);
  },
  remove: (db: Db, id: string) => void stmt(db, 'DELETE FROM svc_services WHERE id = ?').run(id),
  /** Newest first by generation (spec 2 §4.3); seq breaks no ties since each generation makes at most one. */
  revisions: (db: Db, serviceId: string) =>
    stmt(db, 'SELECT * FROM svc_revisions WHERE service_id = ? ORDER BY seq DESC').all(serviceId) as RevisionRow[],
  revision: (db: Db, serviceId: string, name: string) =>
    stmt(db, 'SELECT * FROM svc_revisions WHERE service_id = ? AND name = ?').get(serviceId, name) as RevisionRow | undefined,
  insertRevision(db: Db, r: RevisionRow): void {
    stmt(
      db,
      `INSERT INTO svc_revisions (service_id, name, seq, generation, template, secret_env, state, reason, message, replicas, ready_at, created_at, network)
       VALUES (@service_id, @name, @seq, @generation, @template, @secret_env, @state, @reason, @message, @replicas, @ready_at, @created_at, @network)`,
    ).run(r);
  },
  report(db: Db, serviceId: string, name: string, r: Pick<RevisionRow, 'state' | 'reason' | 'message' | 'replicas' | 'ready_at' | 'network'>): void {
    stmt(db, 'UPDATE svc_revisions SET state = @state, reason = @reason, message = @message, replicas = @replicas, ready_at = @ready_at, network = @network WHERE service_id = @service_id AND name = @name').run({
      ...r,
      service_id: serviceId,
      name,
    });
  },
  source: (db: Db, projectId: string, digest: string) =>
    stmt(db, 'SELECT * FROM svc_sources WHERE project_id = ? AND digest = ?').get(projectId, digest) as { size_bytes: number } | undefined,
  addSource: (db: Db, projectId: string, digest: string, size: number, now: string) =>
    void stmt(db, 'INSERT OR IGNORE INTO svc_sources (project_id, digest, size_bytes, created_at) VALUES (?, ?, ?, ?)').run(projectId, digest, size, now),
};
