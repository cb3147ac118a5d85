import type { Db } from '../../store/db.js';
import type { GrantRole } from './access.js';

/** SQL for organizations and their members (spec 1 §4.4); rules live in orgs.ts. */

export interface OrgRow {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  projects: number;
  users: number;
}

export interface OrgMemberRow {
  user_id: string;
  email: string;
  role: GrantRole;
  created_at: string;
}

// An org's users are its members plus accounts whose home organization it is.
const ORG_SELECT = `SELECT o.*,
  (SELECT COUNT(*) FROM acct_projects p WHERE p.org_id = o.id) AS projects,
  (SELECT COUNT(*) FROM acct_users u WHERE u.org_id = o.id
     OR u.id IN (SELECT user_id FROM acct_org_members m WHERE m.org_id = o.id)) AS users
  FROM acct_orgs o`;

export const listOrgs = (db: Db, limit: number, offset: number) =>
  db.prepare(`${ORG_SELECT} ORDER BY o.slug LIMIT ? OFFSET ?`).all(limit, offset) as OrgRow[];

export const orgById = (db: Db, id: string) => db.prepare(`${ORG_SELECT} WHERE o.id = ?`).get(id) as OrgRow | undefined;
export const orgBySlug = (db: Db, slug: string) => db.prepare(`${ORG_SELECT} WHERE o.slug = ?`).get(slug) as OrgRow | undefined;

export const insertOrg = (db: Db, o: { id: string; slug: string; name: string; createdAt: string }) =>
  db.prepare('INSERT INTO acct_orgs (id, slug, name, created_at) VALUES (?, ?, ?, ?)').run(o.id, o.slug, o.name, o.createdAt);

export const deleteOrg = (db: Db, id: string) => db.prepare('DELETE FROM acct_orgs WHERE id = ?').run(id);

const MEMBER_SELECT = `SELECT m.user_id, u.email, m.role, m.created_at FROM acct_org_members m JOIN acct_users u ON u.id = m.user_id`;

export const listOrgMembers = (db: Db, orgId: string, limit: number, offset: number) =>
  db.prepare(`${MEMBER_SELECT} WHERE m.org_id = ? ORDER BY u.email LIMIT ? OFFSET ?`).all(orgId, limit, offset) as OrgMemberRow[];

export const orgMember = (db: Db, orgId: string, userId: string) =>
  db.prepare(`${MEMBER_SELECT} WHERE m.org_id = ? AND m.user_id = ?`).get(orgId, userId) as OrgMemberRow | undefined;

export const insertOrgMember = (db: Db, orgId: string, userId: string, role: GrantRole, createdAt: string) =>
  db.prepare('INSERT INTO acct_org_members (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?)').run(orgId, userId, role, createdAt);

export const setOrgMemberRole = (db: Db, orgId: string, userId: string, role: GrantRole) =>
  db.prepare('UPDATE acct_org_members SET role = ? WHERE org_id = ? AND user_id = ?').run(role, orgId, userId);

export const deleteOrgMember = (db: Db, orgId: string, userId: string) =>
  db.prepare('DELETE FROM acct_org_members WHERE org_id = ? AND user_id = ?').run(orgId, userId);

export const countOrgAdmins = (db: Db, orgId: string) =>
  (db.prepare(`SELECT COUNT(*) AS n FROM acct_org_members WHERE org_id = ? AND role = 'admin'`).get(orgId) as { n: number }).n;
