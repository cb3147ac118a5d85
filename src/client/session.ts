import { ApiClient } from './api-client.js';
import { AbortError } from './errors.js';
import { getContext, platformHome, type Context } from './contexts.js';
import { CredentialStore, type StoredCredential } from './credentials.js';
import { adminFromEnvironment, adoptLocalAdmin, migrateLegacyAdmin } from './local-admin.js';
import { probeDaemon, requestedPort, startDaemon, type BootstrapAdmin } from './local-daemon.js';
import { answerTimeoutSeconds, noAnswer } from './answer-timeout.js';
import { refreshStoredSession } from './refresh.js';

export interface Connection {
  client: ApiClient;
  context: Context;
  url: string;
  /** Where the credential came from, for whoami and error advice. */
  credentialSource: 'env' | 'stored' | 'local-admin' | 'none';
}

/**
 * Base URL of a context; the local context starts its daemon when it is not running, unless
 * `start` is false (shell completion must never start one): then it fails instead.
 */
export async function contextUrl(context: Context, opts: { start?: boolean } = {}): Promise<string> {
  if (process.env.PLATFORM_API_URL) return process.env.PLATFORM_API_URL.replace(/\/$/, '');
  if (context.kind === 'remote') return context.url!;
  const probe = await probeDaemon(Math.min(answerTimeoutSeconds(), 5) * 1000);
  if (probe.state === 'running') return probe.info.url;
  // Its process lives and its port takes connections: starting another would only fight over the state directory.
  if (probe.state === 'silent') throw noAnswer(probe.info.url, Math.min(answerTimeoutSeconds(), 5));
  if (opts.start === false) throw new AbortError('the local daemon is not running', 'start it with `platform daemon start`');
  const port = requestedPort();
  process.stderr.write(`Starting the local daemon on ${port ? `127.0.0.1:${port}` : 'a free port of 127.0.0.1'}…\n`);
  const started = await startDaemon();
  process.stderr.write(`The local daemon is ready at ${started.url} (state in ${platformHome()}; stop it with \`platform daemon stop\`)\n`);
  if (started.bootstrap) {
    const kept = await adoptBootstrap(context, started.url, started.bootstrap);
    if (started.bootstrap.generated || kept.error) process.stderr.write(bootstrapNotice(started.bootstrap, kept) + '\n');
  }
  return started.url;
}

/**
 * First start: the CLI keeps a key for the bootstrap admin (see local-admin.ts). A failure is
 * reported, not thrown: the caller still has to show a generated password, or it is lost.
 */
export async function adoptBootstrap(context: Context, url: string, admin: BootstrapAdmin): Promise<{ storedIn?: 'keychain' | 'file'; error?: string }> {
  try {
    return { storedIn: (await adoptLocalAdmin(context, url, admin)).storedIn };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** The one time a generated bootstrap password is shown. */
export function bootstrapNotice(admin: BootstrapAdmin, kept: { storedIn?: string; error?: string }): string {
  return [
    `bootstrap admin: ${admin.email}`,
    ...(admin.generated ? [`password: ${admin.password}`] : []),
    kept.storedIn
      ? `(shown only now and stored nowhere; this CLI signed in with an API key kept in the ${kept.storedIn})`
      : `(shown only now and stored nowhere; automatic sign-in failed: ${kept.error}; sign in with \`platform login --email ${admin.email}\`)`,
  ].join('\n');
}

const fresh = (c: StoredCredential | undefined) => c && (!c.expiresAt || c.expiresAt * 1000 > Date.now() + 60_000);

/** The CA a context's requests trust: its own, only when talking to its own URL (not PLATFORM_API_URL's). */
export const contextCa = (context: Context, url: string) => (context.kind === 'remote' && url === context.url ? context.ca_cert : undefined);

/** The local daemon's address now, or undefined when none runs (never starts one). */
async function localDaemonUrl(): Promise<string | undefined> {
  const probe = await probeDaemon();
  return probe.state === 'running' ? probe.info.url : undefined;
}

/**
 * A client for a context's server, trusting the context's CA. The local context's client finds
 * its daemon again after a restart on another port (`daemon start --port 0`).
 */
export const clientFor = (context: Context, url: string, token?: string, refresh?: () => Promise<string | undefined>) =>
  new ApiClient(url, token, {
    ca: contextCa(context, url),
    refresh,
    relocate: context.kind === 'local' && !process.env.PLATFORM_API_URL ? localDaemonUrl : undefined,
  });

/**
 * The stored credential as a client: a session about to expire is refreshed first (an upload
 * cannot be replayed after a 401), and a 401 later in the command refreshes once more.
 */
async function storedClient(context: Context, url: string, stored: StoredCredential): Promise<ApiClient | undefined> {
  let current = stored;
  const ca = contextCa(context, url);
  if (!fresh(current)) {
    const renewed = await refreshStoredSession(context, url, current, ca);
    if (!renewed) return undefined;
    current = renewed;
  }
  const refresh = current.refreshToken
    ? async () => {
        const renewed = await refreshStoredSession(context, url, current, ca);
        if (renewed) current = renewed;
        return renewed?.token;
      }
    : undefined;
  return clientFor(context, url, current.token, refresh);
}

/**
 * Opens a connection for a command: PLATFORM_API_URL and PLATFORM_TOKEN override the context
 * (for CI); otherwise the context's stored credential. The local context signs in by itself:
 * with the key kept at first start, a key made from an earlier version's keys/admin.json (then
 * deleted), or PLATFORM_ADMIN_PASSWORD from the environment.
 */
export async function connect(opts: { context?: string; anonymous?: boolean; startDaemon?: boolean } = {}): Promise<Connection> {
  const context = getContext(opts.context);
  const url = await contextUrl(context, { start: opts.startDaemon });
  if (opts.anonymous) return { client: clientFor(context, url), context, url, credentialSource: 'none' };
  if (process.env.PLATFORM_TOKEN) {
    return { client: clientFor(context, url, process.env.PLATFORM_TOKEN), context, url, credentialSource: 'env' };
  }
  const local = context.kind === 'local' && !process.env.PLATFORM_API_URL;
  // After `platform logout` the local context waits for `platform login` (see Context.signed_out).
  const automatic = local && !context.signed_out;
  const migrated = automatic ? await migrateLegacyAdmin(context, url) : undefined;
  if (migrated) return { client: clientFor(context, url, migrated.token), context, url, credentialSource: 'local-admin' };
  const stored = await new CredentialStore().get(context.name);
  const client = stored ? await storedClient(context, url, stored) : undefined;
  if (client) return { client, context, url, credentialSource: 'stored' };
  const fromEnv = automatic ? await adminFromEnvironment(context, url) : undefined;
  if (fromEnv) return { client: clientFor(context, url, fromEnv.token), context, url, credentialSource: 'local-admin' };
  return { client: clientFor(context, url), context, url, credentialSource: 'none' };
}
