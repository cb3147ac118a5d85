import type { Db } from './store/db.js';
import type { Clock } from './clock.js';
import { newId } from './ids.js';

export interface AuditEntry {
  projectId?: string | null;
  actor: string;
  action: string;
  target?: string;
  details?: Record<string, unknown>;
  requestId?: string;
}

/**
 * Appends an audit row. Callers write it inside the same transaction as the change it records,
 * so a change and its audit row are committed together or not at all.
 */
export function writeAudit(db: Db, clock: Clock, e: AuditEntry): void {
  db.prepare(
    `INSERT INTO acct_audit (id, project_id, ts, actor, action, target, details, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    newId(),
    e.projectId ?? null,
    new Date(clock.now()).toISOString(),
    e.actor,
    e.action,
    e.target ?? '',
    JSON.stringify(e.details ?? {}),
    e.requestId ?? null,
  );
}
