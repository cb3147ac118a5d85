import type { Db } from '../../store/db.js';
import { openText, sealText } from '../../crypto/sealed.js';
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

/** Additional data binding a sealed password to its instance row and column. */
const aad = (id: string, column: 'password' | 'previous_password') => `cache-instance:${id}:${column}`;

/**
 * SQL of the cache area; callers wrap read-then-write sequences in tx(). Passwords are sealed
 * with the daemon's master key like secret values (issue 17): rows read through this class carry
 * them opened, and the database file never holds them in clear.
 */
export class CacheStore {
  constructor(private readonly db: Db) {}

  private seal(id: string, column: 'password' | 'previous_password', value: string | null): string | null {
    return value === null ? null : sealText(this.db, value, aad(id, column));
  }

  /** Opens a stored row's passwords; 503 when the master key is unavailable (sealed store). */
  opened(row: InstanceRow): InstanceRow {
    return {
      ...row,
      password: openText(this.db, row.password, aad(row.id, 'password')),
      previous_password: row.previous_password === null ? null : openText(this.db, row.previous_password, aad(row.id, 'previous_password')),
    };
  }

  private one(row: InstanceRow | undefined): InstanceRow | undefined {
    return row && this.opened(row);
  }

  insert(plain: InstanceRow): void {
    const row = { ...plain, password: this.seal(plain.id, 'password', plain.password), previous_password: this.seal(plain.id, 'previous_password', plain.previous_password) };
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
    return this.one(this.db.prepare('SELECT * FROM cache_instances WHERE project_id = ? AND name = ?').get(projectId, name) as InstanceRow | undefined);
  }

  byId(id: string): InstanceRow | undefined {
    return this.one(this.db.prepare('SELECT * FROM cache_instances WHERE id = ?').get(id) as InstanceRow | undefined);
  }

  /** One page of a project's instances in name order; passwords stay sealed (views never show them). */
  list(projectId: string, offset: number, limit: number): InstanceRow[] {
    return this.db
      .prepare('SELECT * FROM cache_instances WHERE project_id = ? ORDER BY name LIMIT ? OFFSET ?')
      .all(projectId, limit, offset) as InstanceRow[];
  }

  /** Every row with passwords still sealed: open each with opened(), which may fail on its own. */
  all(): InstanceRow[] {
    return this.db.prepare('SELECT * FROM cache_instances ORDER BY created_at').all() as InstanceRow[];
  }

  idsByProject(projectId: string): string[] {
    return (this.db.prepare('SELECT id FROM cache_instances WHERE project_id = ?').all(projectId) as { id: string }[]).map((r) => r.id);
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
    const row = this.byId(id);
    if (!row) return;
    const previous = row.previous_password ?? row.password;
    this.db
      .prepare('UPDATE cache_instances SET previous_password = ?, password = ? WHERE id = ?')
      .run(this.seal(id, 'previous_password', previous), this.seal(id, 'password', password), id);
  }

  /** Records what the server answered PING with: nothing pending when it is the current password. */
  setRunningPassword(id: string, running: string): void {
    const row = this.byId(id);
    if (!row) return;
    const previous = row.password === running ? null : running;
    if (previous === row.previous_password) return;
    this.db.prepare('UPDATE cache_instances SET previous_password = ? WHERE id = ?').run(this.seal(id, 'previous_password', previous), id);
  }

  remove(id: string): void {
    this.db.prepare('DELETE FROM cache_instances WHERE id = ?').run(id);
  }
}
