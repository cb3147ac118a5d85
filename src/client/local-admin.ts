import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { authRoutes } from '../api/auth.js';
import { ApiClient } from './api-client.js';
import { platformHome, type Context } from './contexts.js';
import { CredentialStore, type StoredCredential } from './credentials.js';
import { AbortError, ApiCallError } from './errors.js';

/** The name of the personal API key the CLI makes for itself on the local context. */
export const LOCAL_KEY_NAME = 'platform CLI (local automatic sign-in)';

/**
 * The local context's automatic sign-in (docs/decisions.md, "Local bootstrap admin"): the CLI
 * signs in once with the bootstrap admin's password, makes a personal API key for itself (the
 * daemon keeps only its hash) and stores that key, never the password, in the OS keychain or a
 * 0600 file. As `gh` and `supabase` keep a personal access token, and gcloud and firebase a
 * refresh token: a long-lived credential that can be revoked (`platform keys revoke`) and never
 * reveals the password.
 */
export async function adoptLocalAdmin(
  context: Context,
  url: string,
  admin: { email: string; password: string },
): Promise<{ credential: StoredCredential; storedIn: 'keychain' | 'file' }> {
  const login = await new ApiClient(url).call(authRoutes.login, { body: { email: admin.email, password: admin.password } });
  const created = await new ApiClient(url, login.token).call(authRoutes.createKey, { body: { display_name: LOCAL_KEY_NAME, expires_in_days: 0 } });
  const credential: StoredCredential = { token: created.secret, email: login.email, automatic: true };
  const storedIn = await new CredentialStore().set(context.name, credential);
  return { credential, storedIn };
}

/** keys/admin.json, where versions before issue 16 kept the bootstrap admin's password in clear. */
const legacyAdminFile = () => join(platformHome(), 'keys', 'admin.json');

/**
 * Migrates a state directory of an earlier version: the password in keys/admin.json is used once
 * to make the CLI's key, then the file is deleted. A password that no longer signs in (changed
 * since) is deleted too: it is useless and still a secret. Returns the new credential, if any.
 */
export async function migrateLegacyAdmin(context: Context, url: string): Promise<StoredCredential | undefined> {
  const file = legacyAdminFile();
  if (!existsSync(file)) return undefined;
  let admin: { email?: unknown; password?: unknown } = {};
  try {
    admin = JSON.parse(readFileSync(file, 'utf8')) as typeof admin;
  } catch {
    // unreadable: nothing to use, still to delete
  }
  let credential: StoredCredential | undefined;
  try {
    if (typeof admin.email === 'string' && typeof admin.password === 'string') {
      credential = (await adoptLocalAdmin(context, url, { email: admin.email, password: admin.password })).credential;
    }
  } catch (e) {
    // A daemon that did not answer keeps the file for the next try; a refused password does not.
    if (!(e instanceof ApiCallError)) throw e;
  }
  rmSync(file, { force: true });
  return credential;
}

/**
 * The local context without a stored credential: PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD
 * in the CLI's environment (the variables that set the bootstrap admin at first start) sign in
 * once and the CLI keeps a key, as after a first start.
 */
export async function adminFromEnvironment(context: Context, url: string): Promise<StoredCredential | undefined> {
  const password = process.env.PLATFORM_ADMIN_PASSWORD;
  if (!password) return undefined;
  const email = process.env.PLATFORM_ADMIN_EMAIL || 'admin@platform.local';
  try {
    return (await adoptLocalAdmin(context, url, { email, password })).credential;
  } catch (e) {
    throw new AbortError(`automatic sign-in to the local daemon with PLATFORM_ADMIN_PASSWORD failed: ${(e as Error).message}`, 'sign in with `platform login`');
  }
}

/**
 * `platform logout` on the local context: the key the CLI made for itself is revoked, not just
 * forgotten, when the daemon is running (a key nobody holds should not stay live).
 */
export async function revokeAutomaticKey(url: string, cred: StoredCredential): Promise<string | undefined> {
  if (!cred.automatic) return undefined;
  const keyID = /^svc_([a-z0-9]{12})_/.exec(cred.token)?.[1];
  if (!keyID) return undefined;
  await new ApiClient(url, cred.token).call(authRoutes.revokeKey, { params: { keyID } });
  return keyID;
}
