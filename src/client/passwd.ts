import { authRoutes } from '../api/auth.js';
import type { Connection } from './session.js';
import { CredentialStore } from './credentials.js';
import { sessionCredential } from './refresh.js';

export interface PasswdResult {
  email: string;
  role: 'admin' | 'user';
  must_change_password: boolean;
  expires_at: number;
  /** Where the fresh session token went: keychain, file, or not stored (PLATFORM_TOKEN or an API key in use). */
  stored_in: 'keychain' | 'file' | 'not-stored';
}

/**
 * Changes the signed-in person's password and keeps the CLI signed in: the fresh session token
 * replaces a stored session token; an API key in use (such as the local context's automatic
 * sign-in key) stays, since a password change does not revoke keys. Never sees oclif.
 */
export async function changePassword(conn: Connection, current: string, next: string): Promise<PasswdResult> {
  const res = await conn.client.call(authRoutes.changePassword, { body: { current_password: current, new_password: next } });
  const store = new CredentialStore();
  let storedIn: PasswdResult['stored_in'] = 'not-stored';
  if (conn.credentialSource === 'stored' || conn.credentialSource === 'local-admin') {
    const previous = await store.get(conn.context.name);
    // An API key in use stays: it is still valid and the user chose it over a session.
    if (!previous?.token.startsWith('svc_')) {
      storedIn = await store.set(conn.context.name, sessionCredential(res));
      // The replaced session is held by nobody now: end it rather than leave it live for its refresh lifetime.
      if (previous?.refreshToken) await conn.client.call(authRoutes.revoke, { body: { token: previous.refreshToken } }).catch(() => undefined);
    }
  }
  return { email: res.email, role: res.role, must_change_password: res.must_change_password, expires_at: res.expires_at, stored_in: storedIn };
}
