import type { SearchableName, SearchScope } from '../../area.js';
import type { Db } from '../../store/db.js';

/**
 * Agents and functions for the cross-resource search: in projects where the caller is a contents
 * admin every one, elsewhere only those it deployed (what `GET /v1/agents` shows a plain member).
 */
export function searchAgents(db: Db, scope: SearchScope, needle: string, limit: number): SearchableName[] {
  if (!scope.projects.length) return [];
  const cond = scope.projects.map((p) => (p.admin ? '(project_id = ?)' : '(project_id = ? AND owner = ?)')).join(' OR ');
  const args = scope.projects.flatMap((p) => (p.admin ? [p.id] : [p.id, scope.email]));
  const rows = db
    .prepare(`SELECT project_id, name, kind FROM agents_agents WHERE (${cond}) AND instr(lower(name), ?) > 0 ORDER BY length(name), name LIMIT ?`)
    .all(...args, needle.toLowerCase(), limit) as Array<{ project_id: string; name: string; kind: 'agent' | 'function' }>;
  return rows.map((r) => ({ kind: r.kind, name: r.name, projectId: r.project_id }));
}
