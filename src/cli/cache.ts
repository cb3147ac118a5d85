import type { CacheCredential, MemorystoreView } from '../api/cache.js';
import type { ApiClient } from '../client/api-client.js';
import { getContext } from '../client/contexts.js';
import { SecretStore } from '../client/secret-store.js';
import { projectFlag as sharedProjectFlag } from './project-flag.js';

/** Flags shared by every `platform cache` command. */
export const projectFlag = {
  project: sharedProjectFlag,
};

/**
 * The cache API takes the project's UUID in the path (spec 3 §7: a malformed id is a 400), so
 * a slug or short name is resolved through GET /v1/projects/{ref} first.
 */
export async function resolveProjectId(client: ApiClient, flag: string | undefined, contextName?: string): Promise<string> {
  return client.projectId(flag ?? getContext(contextName).project ?? 'default');
}

/**
 * The password is shown only by create and rotate (spec 3 §4.2). The CLI keeps the last one it
 * saw so `platform cache connect` can use it later, as a database CLI keeps its connection
 * secrets: in the OS keychain, else a 0600 file of the state directory (SecretStore).
 */
const credentials = () => new SecretStore<CacheCredential>('platform-cli-cache', 'cache-credentials.json');

const key = (context: string, projectId: string, name: string) => `${context}/${projectId}/${name}`;

/** Where the password went: the keychain, or the 0600 file. */
export function saveCredential(context: string, projectId: string, name: string, c: CacheCredential): Promise<'keychain' | 'file'> {
  return credentials().set(key(context, projectId, name), c);
}

export function savedCredential(context: string, projectId: string, name: string): Promise<CacheCredential | undefined> {
  return credentials().get(key(context, projectId, name));
}

export function forgetCredential(context: string, projectId: string, name: string): Promise<void> {
  return credentials().delete(key(context, projectId, name));
}

/** The summary fields a person reads first, in a stable order. */
export function instanceFields(m: MemorystoreView): Record<string, unknown> {
  return {
    name: m.name,
    state: m.state,
    ready: m.ready,
    message: m.message,
    size_class: m.size_class,
    memory_limit: m.memory_limit,
    maxmemory: m.maxmemory,
    maxmemory_policy: m.maxmemory_policy,
    version: m.version ?? 'platform default',
    persistence: m.persistence.enabled ? `on (${m.persistence.size})` : 'off',
    connection: `${m.connection.host}:${m.connection.port} (user ${m.connection.username})`,
    credential_secret: m.connection.credential_secret,
    external_exposure: m.external_exposure,
    externally_reachable: m.externally_reachable,
    external_endpoint: m.external_endpoint,
    resource_path: m.resource_path,
    created_at: m.created_at,
  };
}
