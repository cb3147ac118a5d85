import { authRoutes } from '../api/auth.js';
import { ApiClient } from './api-client.js';
import type { Context } from './contexts.js';
import { CredentialStore, type StoredCredential } from './credentials.js';
import { ApiCallError } from './errors.js';

/** What a session answer (login, device sign-in, refresh) becomes in the credential store. */
export function sessionCredential(res: { token: string; email: string; expires_at: number; refresh_token?: string; refresh_expires_at?: number }): StoredCredential {
  return {
    token: res.token,
    email: res.email,
    expiresAt: res.expires_at,
    ...(res.refresh_token ? { refreshToken: res.refresh_token, refreshExpiresAt: res.refresh_expires_at } : {}),
  };
}

/**
 * Trades the stored refresh token for a fresh session and stores it. Refresh tokens are single
 * use, so when two commands refresh at once the loser is refused: it then finds the winner's
 * session in the store and uses that. Returns undefined when no session can be had (sign in again).
 */
export async function refreshStoredSession(context: Context, url: string, had: StoredCredential, ca?: string): Promise<StoredCredential | undefined> {
  if (!had.refreshToken) return undefined;
  const store = new CredentialStore();
  try {
    const res = await new ApiClient(url, undefined, { ca }).call(authRoutes.refresh, { body: { refresh_token: had.refreshToken } });
    const fresh = sessionCredential(res);
    await store.set(context.name, fresh);
    return fresh;
  } catch (e) {
    if (!(e instanceof ApiCallError) || e.status !== 401) throw e;
    const now = await store.get(context.name);
    return now && now.token !== had.token ? now : undefined;
  }
}
