import { randomUUID } from 'node:crypto';
import type { TestDaemon } from './daemon.js';
import { hashPassword } from '../../src/daemon/services/auth/passwords.js';
import { newShort } from '../../src/daemon/ids.js';
import { DEFAULT_QUOTAS } from '../../src/daemon/services/accounts/quotas.js';
import { createKey } from '../../src/daemon/services/auth/keys.js';

/** A password that satisfies the rule; every fixture user gets it. */
export const FIXTURE_PASSWORD = 'Fixture-Password-1';
let cachedHash: Promise<string> | undefined;

/**
 * Test fixtures written straight into the in-process daemon's database: fast set-up for the
 * authorization tests of every area. The account routes themselves are tested through HTTP.
 */
export async function makeUser(d: TestDaemon, opts: { email?: string; platformAdmin?: boolean; mustChangePassword?: boolean; orgId?: string } = {}) {
  const id = randomUUID();
  const email = opts.email ?? `user-${id.slice(0, 8)}@example.test`;
  const hash = await (cachedHash ??= hashPassword(FIXTURE_PASSWORD));
  const orgId = opts.orgId ?? (d.db.prepare(`SELECT id FROM acct_orgs WHERE slug = 'default'`).get() as { id: string }).id;
  d.db
    .prepare('INSERT INTO acct_users (id, email, password_hash, role, must_change_password, org_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(id, email, hash, opts.platformAdmin ? 'admin' : 'user', opts.mustChangePassword ? 1 : 0, orgId, new Date().toISOString());
  const token = await d.login(email, FIXTURE_PASSWORD);
  return { id, email, token };
}

export function makeProject(d: TestDaemon, opts: { slug?: string; orgId?: string } = {}) {
  const id = randomUUID();
  const slug = opts.slug ?? `proj-${id.slice(0, 8)}`;
  const orgId = opts.orgId ?? (d.db.prepare(`SELECT id FROM acct_orgs WHERE slug = 'default'`).get() as { id: string }).id;
  const short = newShort();
  d.db
    .prepare('INSERT INTO acct_projects (id, org_id, slug, name, short, is_default, created_at) VALUES (?, ?, ?, ?, ?, 0, ?)')
    .run(id, orgId, slug, slug, short, new Date().toISOString());
  const q = d.db.prepare('INSERT INTO acct_project_quotas (project_id, resource, value, unit) VALUES (?, ?, ?, ?)');
  for (const x of DEFAULT_QUOTAS) q.run(id, x.resource, x.value, x.unit);
  return { id, slug, short };
}

export function grant(d: TestDaemon, projectId: string, userId: string, role: 'admin' | 'member') {
  d.db
    .prepare('INSERT INTO acct_project_members (id, project_id, user_id, role, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(randomUUID(), projectId, userId, role, new Date().toISOString());
}

/** A service account with a role on the project and a live key; returns the key (svc_...). */
export function makeServiceAccountKey(d: TestDaemon, projectId: string, role: 'admin' | 'member' = 'member') {
  const saId = randomUUID();
  const name = `sa-${saId.slice(0, 8)}`;
  const now = new Date().toISOString();
  d.db.prepare('INSERT INTO acct_service_accounts (id, project_id, name, display_name, created_at) VALUES (?, ?, ?, ?, ?)').run(saId, projectId, name, name, now);
  d.db
    .prepare('INSERT INTO acct_project_members (id, project_id, service_account_id, role, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(randomUUID(), projectId, saId, role, now);
  const { secret } = createKey(d.db, d.app.ctx.clock, { kind: 'service_account', serviceAccountId: saId, projectId }, name);
  return { serviceAccountId: saId, name, token: secret };
}

/**
 * The standard cast for an area's authorization tests on one fresh project: project admin,
 * member, outsider (a user with no grant: must see 404 everywhere), a platform admin without
 * grants (metadata only), and a member service-account key.
 */
export async function cast(d: TestDaemon) {
  const project = makeProject(d);
  const admin = await makeUser(d);
  const member = await makeUser(d);
  const outsider = await makeUser(d);
  const platformAdmin = await makeUser(d, { platformAdmin: true });
  grant(d, project.id, admin.id, 'admin');
  grant(d, project.id, member.id, 'member');
  const sa = makeServiceAccountKey(d, project.id, 'member');
  return { project, admin, member, outsider, platformAdmin, sa };
}
