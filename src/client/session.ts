import { ApiClient } from './api-client.js';
import { getContext, type Context } from './contexts.js';
import { CredentialStore, type StoredCredential } from './credentials.js';
import { AbortError } from './errors.js';
import { adminFromEnvironment, adoptLocalAdmin, migrateLegacyAdmin } from './local-admin.js';
import { findDaemon, startDaemon, type BootstrapAdmin } from './local-daemon.js';

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
  const started = await startDaemon();
  if (started.bootstrap) {
    const { storedIn } = await adoptBootstrap(context, started.url, started.bootstrap);
    if (started.bootstrap.generated) process.stderr.write(bootstrapNotice(started.bootstrap, storedIn) + '\n');
  }
  return started.url;
}

/** First start: the CLI keeps a key for the bootstrap admin (see local-admin.ts). */
export function adoptBootstrap(context: Context, url: string, admin: BootstrapAdmin) {
  return adoptLocalAdmin(context, url, admin).catch((e: unknown) => {
    throw new AbortError(`automatic sign-in to the new local daemon failed: ${(e as Error).message}`, `sign in with \`platform login --email ${admin.email}\``);
  });
}

/** The one time a generated bootstrap password is shown. */
export function bootstrapNotice(admin: BootstrapAdmin, storedIn: 'keychain' | 'file'): string {
  return [
    `bootstrap admin: ${admin.email}`,
    `password: ${admin.password}`,
    `(shown only now and stored nowhere; this CLI signed in with an API key kept in the ${storedIn})`,
  ].join('\n');
}

const fresh = (c: StoredCredential | undefined) => c && (!c.expiresAt || c.expiresAt * 1000 > Date.now() + 60_000);

/**
 * Opens a connection for a command: PLATFORM_API_URL and PLATFORM_TOKEN override the context
 * (for CI); otherwise the context's stored credential. The local context signs in by itself:
 * with the key kept at first start, a key made from an earlier version's keys/admin.json (then
 * deleted), or PLATFORM_ADMIN_PASSWORD from the environment.
 */
export async function connect(opts: { context?: string; anonymous?: boolean } = {}): Promise<Connection> {
  const context = getContext(opts.context);
  const url = await contextUrl(context);
  if (opts.anonymous) return { client: new ApiClient(url), context, url, credentialSource: 'none' };
  if (process.env.PLATFORM_TOKEN) {
    return { client: new ApiClient(url, process.env.PLATFORM_TOKEN), context, url, credentialSource: 'env' };
  }
  const local = context.kind === 'local' && !process.env.PLATFORM_API_URL;
  const migrated = local ? await migrateLegacyAdmin(context, url) : undefined;
  if (migrated) return { client: new ApiClient(url, migrated.token), context, url, credentialSource: 'local-admin' };
  const stored = await new CredentialStore().get(context.name);
  if (fresh(stored)) return { client: new ApiClient(url, stored!.token), context, url, credentialSource: 'stored' };
  const fromEnv = local ? await adminFromEnvironment(context, url) : undefined;
  if (fromEnv) return { client: new ApiClient(url, fromEnv.token), context, url, credentialSource: 'local-admin' };
  return { client: new ApiClient(url), context, url, credentialSource: 'none' };
}
