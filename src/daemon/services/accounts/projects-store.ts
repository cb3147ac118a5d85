import type { Db } from '../../store/db.js';
import type { ProjectRow } from './access.js';
import { DEFAULT_QUOTAS } from './quotas.js';

/** SQL for project objects and their quota rows (spec 1 §4.5, §8.3). */

export const projectById = (db: Db, id: string) => db.prepare('SELECT * FROM acct_projects WHERE id = ?').get(id) as ProjectRow | undefined;
export const projectBySlug = (db: Db, slug: string) =>
  db.prepare('SELECT * FROM acct_projects WHERE slug = ?').get(slug) as ProjectRow | undefined;
export const shortTaken = (db: Db, short: string) => Boolean(db.prepare('SELECT 1 FROM acct_projects WHERE short = ?').get(short));

/** Inserts a project with the default quota rows of §8.3, both in the caller's transaction. */
export function insertProject(db: Db, p: { id: string; orgId: string; slug: string; name: string; short: string; createdAt: string }): void {
  db.prepare('INSERT INTO acct_projects (id, org_id, slug, name, short, is_default, created_at) VALUES (?, ?, ?, ?, ?, 0, ?)').run(
    p.id,
    p.orgId,
    p.slug,
    p.name,
    p.short,
    p.createdAt,
  );
  const quota = db.prepare('INSERT INTO acct_project_quotas (project_id, resource, value, unit) VALUES (?, ?, ?, ?)');
  for (const q of DEFAULT_QUOTAS) quota.run(p.id, q.resource, q.value, q.unit);
}

export const renameProject = (db: Db, id: string, slug: string, name: string) =>
  db.prepare('UPDATE acct_projects SET slug = ?, name = ? WHERE id = ?').run(slug, name, id);

/** Quota rows, members, service accounts, keys and invitations go with the project (ON DELETE CASCADE). */
export const deleteProject = (db: Db, id: string) => db.prepare('DELETE FROM acct_projects WHERE id = ?').run(id);

export const quotaRows = (db: Db, projectId: string) =>
  db.prepare('SELECT resource, value, unit FROM acct_project_quotas WHERE project_id = ? ORDER BY rowid').all(projectId) as {
    resource: string;
    value: number;
    unit: string;
  }[];
