import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from './store/db.js';
import { tx } from './store/db.js';
import type { Clock } from './clock.js';
import { newId, newShort } from './ids.js';
import { writeAudit } from './audit.js';
import { generatePassword, hashPassword } from './services/auth/passwords.js';
import { DEFAULT_QUOTAS } from './services/accounts/quotas.js';
import { makeStatePrivate } from './state-permissions.js';

export const DEFAULT_ADMIN_EMAIL = 'admin@platform.local';

export interface StatePaths {
  home: string;
  db: string;
  keys: string;
  logs: string;
  /** Where versions before issue 16 kept the bootstrap admin's password; the CLI migrates it away. */
  legacyAdminCredential: string;
  locator: string;
}

export function statePaths(home: string): StatePaths {
  return {
    home,
    db: join(home, 'platform.db'),
    keys: join(home, 'keys'),
    logs: join(home, 'logs'),
    legacyAdminCredential: join(home, 'keys', 'admin.json'),
    locator: join(home, 'daemon.json'),
  };
}

/** Creates the state directory tree, private to the user (state-permissions.ts). */
export function ensureStateDirs(paths: StatePaths): void {
  makeStatePrivate(paths.home, paths.db);
  for (const d of [paths.home, join(paths.home, 'builds'), join(paths.home, 'workloads'), paths.logs, join(paths.home, 'cache')]) {
    mkdirSync(d, { recursive: true });
  }
  mkdirSync(paths.keys, { recursive: true, mode: 0o700 });
  chmodSync(paths.keys, 0o700);
}

/** Writes a file readable only by its owner (0600), even if it already existed with wider bits. */
export function writePrivate(file: string, data: string | Buffer): void {
  writeFileSync(file, data, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** Loads the daemon's signing key, creating it on first start. */
export function loadSigningKey(paths: StatePaths): Buffer {
  const file = join(paths.keys, 'signing.key');
  if (!existsSync(file)) writePrivate(file, randomBytes(32).toString('base64'));
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

/** The bootstrap admin of a first start: shown once, never stored (docs/decisions.md). */
export interface BootstrapAdmin {
  email: string;
  password: string;
  /** True when the daemon made the password up (not given in PLATFORM_ADMIN_PASSWORD). */
  generated: boolean;
}

/**
 * First start: org `default`, project `default`, and an admin who is platform admin and admin of
 * org `default`. Returns the admin's credential so the caller can show it once; only its hash is
 * kept. It does not owe a first-login change because no person chose it as a temporary password.
 * Undefined when the state directory was bootstrapped before.
 */
export async function bootstrap(db: Db, clock: Clock, admin: { email?: string; password?: string }): Promise<BootstrapAdmin | undefined> {
  const existing = db.prepare('SELECT 1 FROM acct_users LIMIT 1').get();
  if (existing) return undefined;
  const email = (admin.email ?? DEFAULT_ADMIN_EMAIL).trim().toLowerCase();
  const password = admin.password ?? generatePassword();
  const hash = await hashPassword(password);
  const now = new Date(clock.now()).toISOString();
  tx(db, () => {
    const orgId = newId();
    const projectId = newId();
    const userId = newId();
    db.prepare('INSERT INTO acct_orgs (id, slug, name, created_at) VALUES (?, ?, ?, ?)').run(orgId, 'default', 'Default organization', now);
    db.prepare(
      'INSERT INTO acct_users (id, email, password_hash, role, must_change_password, org_id, created_at) VALUES (?, ?, ?, ?, 0, ?, ?)',
    ).run(userId, email, hash, 'admin', orgId, now);
    db.prepare('INSERT INTO acct_org_members (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?)').run(orgId, userId, 'admin', now);
    db.prepare('INSERT INTO acct_projects (id, org_id, slug, name, short, is_default, created_at) VALUES (?, ?, ?, ?, ?, 1, ?)').run(
      projectId,
      orgId,
      'default',
      'Default project',
      newShort(),
      now,
    );
    const quota = db.prepare('INSERT INTO acct_project_quotas (project_id, resource, value, unit) VALUES (?, ?, ?, ?)');
    for (const q of DEFAULT_QUOTAS) quota.run(projectId, q.resource, q.value, q.unit);
    writeAudit(db, clock, { actor: 'platform', action: 'platform.bootstrap', target: email, projectId });
  });
  return { email, password, generated: admin.password === undefined };
}
