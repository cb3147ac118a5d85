import type { Db } from '../../store/db.js';
import type { CacheState, MaxmemoryPolicy, SizeClass } from '../../../api/cache.js';

export interface InstanceRow {
  id: string;
  project_id: string;
  name: string;
  size_class: SizeClass;
  version: string;
  maxmemory_policy: MaxmemoryPolicy;
  persistence_enabled: number;
  persistence_size: string;
  storage_class_name: string;
  external_exposure: number;
  port: number;
  tls_port: number | null;
  password: string;
  previous_password: string | null;
  state: CacheState;
  message: string | null;
  ever_ready: number;
  driver: string;
  created_at: string;
}

/** SQL of the cache area; callers wrap read-then-write sequences in tx(). */
export class CacheStore {
  constructor(private readonly db: Db) {}

  insert(row: InstanceRow): void {
    this.db
      .prepare(
        `INSERT INTO cache_instances (id, project_id, name, size_class, version, maxmemory_policy, persistence_enabled,
          persistence_size, storage_class_name, external_exposure, port, tls_port, password, previous_password, state,
          message, ever_ready, driver, created_at)
         VALUES (@id, @project_id, @name, @size_class, @version, @maxmemory_policy, @persistence_enabled,
          @persistence_size, @storage_class_name, @external_exposure, @port, @tls_port, @password, @previous_password,
          @state, @message, @ever_ready, @driver, @created_at)`,
      )
      .run(row);
  }

  byName(projectId: string, name: string): InstanceRow | undefined {
    return this.db.prepare('SELECT * FROM cache_instances WHERE project_id = ? AND name = ?').get(projectId, name) as InstanceRow | undefined;
  }

  byId(id: string): InstanceRow | undefined {
    return this.db.prepare('SELECT * FROM cache_instances WHERE id = ?').get(id) as InstanceRow | undefined;
  }

  /** One page of a project's instances in name order, fetching `limit` rows from `offset`. */
  list(projectId: string, offset: number, limit: number): InstanceRow[] {
    return this.db
      .prepare('SELECT * FROM cache_instances WHERE project_id = ? ORDER BY name LIMIT ? OFFSET ?')
      .all(projectId, limit, offset) as InstanceRow[];
  }

  all(): InstanceRow[] {
    return this.db.prepare('SELECT * FROM cache_instances ORDER BY created_at').all() as InstanceRow[];
  }

  countByProject(projectId: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM cache_instances WHERE project_id = ?').get(projectId) as { n: number }).n;
  }

  portTaken(port: number): boolean {
    return Boolean(this.db.prepare('SELECT 1 FROM cache_instances WHERE port = ? OR tls_port = ?').get(port, port));
  }

  /**
   * Records what the supervisor observed. A deleting instance keeps its state: the delete owns it.
   * Reaching ready once marks the instance provisioned for good (stats and rotate need that).
   */
  setObserved(id: string, state: CacheState, message: string | null): void {
    this.db
      .prepare(
        `UPDATE cache_instances SET state = ?, message = ?, ever_ready = MAX(ever_ready, ?)
         WHERE id = ? AND state != 'deleting'`,
      )
      .run(state, message, state === 'ready' ? 1 : 0, id);
  }

  markDeleting(id: string): void {
    this.db.prepare(`UPDATE cache_instances SET state = 'deleting', message = 'deleting the instance and its data' WHERE id = ?`).run(id);
  }

  setDeleteFailure(id: string, message: string): void {
    this.db.prepare(`UPDATE cache_instances SET message = ? WHERE id = ? AND state = 'deleting'`).run(message, id);
  }

  /**
   * previous_password is the password the running server still holds. A second rotation before
   * the restart keeps it: the server still runs the first one, not the one rotated away.
   */
  rotatePassword(id: string, password: string): void {
    this.db.prepare('UPDATE cache_instances SET previous_password = COALESCE(previous_password, password), password = ? WHERE id = ?').run(password, id);
  }

  /** Records what the server answered PING with: nothing pending when it is the current password. */
  setRunningPassword(id: string, running: string): void {
    this.db
      .prepare('UPDATE cache_instances SET previous_password = CASE WHEN password = @running THEN NULL ELSE @running END WHERE id = @id')
      .run({ id, running });
  }

  remove(id: string): void {
    this.db.prepare('DELETE FROM cache_instances WHERE id = ?').run(id);
  }
}
