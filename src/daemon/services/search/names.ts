import type { SearchKind } from '../../../api/search.js';
import type { SearchableName, SearchScope } from '../../area.js';
import type { Db } from '../../store/db.js';

/**
 * The common searchable of an area whose resources are rows with project_id and name: names
 * containing the needle (case-insensitive) in the scope's projects. The area names its own table
 * and the condition that leaves out rows being deleted, so no other area reads its store.
 */
export function namesIn(db: Db, kind: SearchKind, table: string, live = '1 = 1') {
  return (scope: SearchScope, needle: string, limit: number): SearchableName[] => {
    const ids = scope.projects.map((p) => p.id);
    if (!ids.length) return [];
    const rows = db
      .prepare(`SELECT project_id, name FROM ${table} WHERE project_id IN (${ids.map(() => '?').join(',')}) AND instr(lower(name), ?) > 0 AND (${live}) ORDER BY length(name), name LIMIT ?`)
      .all(...ids, needle.toLowerCase(), limit) as Array<{ project_id: string; name: string }>;
    return rows.map((r) => ({ kind, name: r.name, projectId: r.project_id }));
  };
}
