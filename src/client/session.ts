import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { authRoutes } from '../api/auth.js';
import { ApiClient } from './api-client.js';
import { getContext, platformHome, type Context } from './contexts.js';
import { CredentialStore, type StoredCredential } from './credentials.js';
import { AbortError } from './errors.js';
import { findDaemon, startDaemon } from './local-daemon.js';

export interface Connection {
  client: ApiClient;
  context: Context;
  url: string;
  /** Where the credential came from, for whoami and error advice. */
  credentialSource: 'env' | 'stored' | 'local-admin' | 'none';
}

/** Base URL of a context; the local context starts its daemon when it is not running. */
export async function contextUrl(context: Context): Promise<string> {
  if (process.env.PLATFORM_API_URL) return process.env.PLATFORM_API_URL.replace(/\/$/, '');
  if (context.kind === 'remote') return context.url!;
  const running = await findDaemon();
  if (running) return running.url;
  return (await startDaemon()).url;
}

const fresh = (c: StoredCredential | undefined) => c && (!c.expiresAt || c.expiresAt * 1000 > Date.now() + 60_000);

/**
 * Opens a connection for a command: PLATFORM_API_URL and PLATFORM_TOKEN override the context
 * (for CI); otherwise the context's stored credential; the local context signs in by itself with
 * the bootstrap admin kept 0600 in the state directory.
 */
export async function connect(opts: { context?: string; anonymous?: boolean } = {}): Promise<Connection> {
  const context = getContext(opts.context);
  const url = await contextUrl(context);
  if (opts.anonymous) return { client: new ApiClient(url), context, url, credentialSource: 'none' };
  if (process.env.PLATFORM_TOKEN) {
    return { client: new ApiClient(url, process.env.PLATFORM_TOKEN), context, url, credentialSource: 'env' };
  }
  const store = new CredentialStore();
  const stored = await store.get(context.name);
  if (fresh(stored)) return { client: new ApiClient(url, stored!.token), context, url, credentialSource: 'stored' };
  if (context.kind === 'local' && !process.env.PLATFORM_API_URL) {
    const cred = await localAdminLogin(url);
    if (cred) {
      await store.set(context.name, cred);
      return { client: new ApiClient(url, cred.token), context, url, credentialSource: 'local-admin' };
    }
  }
  return { client: new ApiClient(url), context, url, credentialSource: 'none' };
}

/** Signs in as the local bootstrap admin, whose credential the daemon wrote at first start. */
async function localAdminLogin(url: string): Promise<StoredCredential | undefined> {
  const file = join(platformHome(), 'keys', 'admin.json');
  if (!existsSync(file)) return undefined;
  const { email, password } = JSON.parse(readFileSync(file, 'utf8')) as { email: string; password: string };
  const res = await new ApiClient(url).call(authRoutes.login, { body: { email, password } }).catch((e: unknown) => {
    throw new AbortError(`automatic sign-in to the local daemon failed: ${(e as Error).message}`, 'sign in with `platform login`');
  });
  return { token: res.token, email: res.email, expiresAt: res.expires_at };
}
