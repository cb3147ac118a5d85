import type { Context } from './contexts.js';
import { CredentialStore } from './credentials.js';
import { refreshStoredSession } from './refresh.js';
import { contextCa, contextUrl } from './session.js';

/** What a printed token should still be good for: a script's next few requests, not only the next second. */
const MIN_LIFETIME_MS = 5 * 60_000;

/**
 * Before a session token leaves the CLI (`platform auth token`), a stored session with less than
 * five minutes left is refreshed. Commands themselves refresh at one minute (session.ts), which is
 * enough for a request made now but not for a token handed to a script.
 */
export async function renewShortLivedSession(context: Context): Promise<void> {
  if (process.env.PLATFORM_TOKEN) return;
  const stored = await new CredentialStore().get(context.name);
  if (!stored?.refreshToken || !stored.expiresAt || stored.expiresAt * 1000 > Date.now() + MIN_LIFETIME_MS) return;
  const url = await contextUrl(context);
  await refreshStoredSession(context, url, stored, contextCa(context, url));
}
