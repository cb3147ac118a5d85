import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { authRoutes } from '../api/auth.js';
import type { Connection } from './session.js';
import { platformHome } from './contexts.js';
import { CredentialStore } from './credentials.js';
import { writePrivateFile } from './files.js';

export interface PasswdResult {
  email: string;
  role: 'admin' | 'user';
  must_change_password: boolean;
  expires_at: number;
  /** Where the fresh session token went: keychain, file, or not stored (PLATFORM_TOKEN or an API key in use). */
  stored_in: 'keychain' | 'file' | 'not-stored';
  /** True when the local bootstrap admin's credential file was updated for automatic sign-in. */
  local_admin_updated: boolean;
}

/**
 * Changes the signed-in person's password and keeps the CLI signed in: the fresh session token
 * replaces a stored session token, and on the local context the bootstrap admin's credential
 * file follows the change so automatic sign-in keeps working. Never sees oclif.
 */
export async function changePassword(conn: Connection, current: string, next: string): Promise<PasswdResult> {
  const res = await conn.client.call(authRoutes.changePassword, { body: { current_password: current, new_password: next } });
  const store = new CredentialStore();
  let storedIn: PasswdResult['stored_in'] = 'not-stored';
  if (conn.credentialSource === 'stored' || conn.credentialSource === 'local-admin') {
    const previous = await store.get(conn.context.name);
    // An API key in use stays: it is still valid and the user chose it over a session.
    if (!previous?.token.startsWith('svc_')) storedIn = await store.set(conn.context.name, { token: res.token, email: res.email, expiresAt: res.expires_at });
  }
  let localAdminUpdated = false;
  const adminFile = join(platformHome(), 'keys', 'admin.json');
  if (conn.context.kind === 'local' && !process.env.PLATFORM_API_URL && existsSync(adminFile)) {
    const admin = JSON.parse(readFileSync(adminFile, 'utf8')) as { email: string; password: string };
    if (admin.email.toLowerCase() === res.email.toLowerCase()) {
      writePrivateFile(adminFile, JSON.stringify({ ...admin, password: next }, null, 2) + '\n');
      localAdminUpdated = true;
    }
  }
  return { email: res.email, role: res.role, must_change_password: res.must_change_password, expires_at: res.expires_at, stored_in: storedIn, local_admin_updated: localAdminUpdated };
}
