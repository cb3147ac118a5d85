import { ENV_KEY_RE } from '../../../api/agents.js';
import { badRequest } from '../../http/errors.js';

/** Platform-owned variable names an env PATCH refuses, by group (spec 1 §4.12). */
export const REFUSED_ENV_GROUPS: Record<string, readonly string[]> = {
  credentials: ['MODEL_API_KEY', 'SVC_INTERNAL_TOKEN', 'SVC_PROJECT_KEY', 'VECTOR_STORE_API_KEY', 'PLATFORM_VECTORDB_API_KEY', 'CACHE_PASSWORD', 'PLATFORM_MEMORYSTORE_PASSWORD'],
  wiring: [
    'CACHE_ADDR', 'CACHE_USERNAME', 'PLATFORM_MEMORYSTORE_ADDR', 'PLATFORM_MEMORYSTORE_USERNAME', 'VECTOR_STORE_URL', 'PLATFORM_VECTORDB_URL',
    'SANDBOX_URL', 'SVC_API_URL', 'SVC_PUBSUB_URL', 'SVC_VECTORDB_URL', 'MCP_SERVERS',
  ],
  identity: ['SVC_PROJECT_ID', 'PROJECT_SHORT', 'AGENT_NAME', 'AGENT_IMAGE', 'K_REVISION'],
  derived: ['PLATFORM_REQUEST_TIMEOUT_SECONDS'],
  'memory policy': ['MEMORY_MODE', 'MEMORY_INJECT', 'MEMORY_TTL_SECONDS', 'MEMORY_EXCLUDE_SENSITIVE', 'MEMORY_TOPICS', 'MEMORY_INSTRUCTIONS', 'KNOWLEDGE_ENABLED'],
  reserved: ['LD_PRELOAD', 'PYTHONPATH', 'PATH', 'HOME', 'SECRETSTORE_ADDR', 'SECRETSTORE_TOKEN', 'BROKER_URL', 'BROKER_PASSWORD', 'TOOL_SANDBOX'],
};

/** Why a name is refused, with the advice the spec gives for some groups. */
const GROUP_HINT: Record<string, string> = {
  derived: 'set timeout_seconds instead',
  'memory policy': 'use PUT /v1/agents/{name}/memory/policy (platform memory policy AGENT)',
  credentials: 'set secrets through the secrets route',
};

export function refusedEnvGroup(key: string): string | undefined {
  if (key.startsWith('ORCHESTRATOR_SERVICE_')) return 'reserved';
  for (const [group, names] of Object.entries(REFUSED_ENV_GROUPS)) if (names.includes(key)) return group;
  return undefined;
}

/** Checks the set and remove shape shared by env and secrets PATCH (spec 1 §4.12). */
export function checkSetRemove(body: { set?: Record<string, string>; remove?: string[] }): void {
  if (!Object.keys(body.set ?? {}).length && !(body.remove ?? []).length) throw badRequest('nothing to change: set and remove are both empty');
  checkKeys([...Object.keys(body.set ?? {}), ...(body.remove ?? [])]);
}

export function checkKeys(keys: string[]): void {
  const bad = keys.filter((k) => !ENV_KEY_RE.test(k));
  if (bad.length) throw badRequest(`invalid key${bad.length > 1 ? 's' : ''} ${bad.join(', ')}: keys must match ^[A-Za-z_][A-Za-z0-9_]*$`);
}

/** Env PATCH refuses every platform-owned name, naming each key and its group in one 400. */
export function checkEnvNames(keys: string[]): void {
  const refused = keys.map((k) => ({ k, g: refusedEnvGroup(k) })).filter((x) => x.g);
  if (!refused.length) return;
  const parts = refused.map(({ k, g }) => `${k} (${g}${GROUP_HINT[g!] ? `: ${GROUP_HINT[g!]}` : ''})`);
  throw badRequest(`platform-owned variable${refused.length > 1 ? 's' : ''} cannot be set or removed: ${parts.join(', ')}`);
}

/** Applies set and remove to a map; an empty value in set means remove (spec 1 §4.12). */
export function applySetRemove(current: Record<string, string>, body: { set?: Record<string, string>; remove?: string[] }): { next: Record<string, string>; changed: number } {
  const next = { ...current };
  let changed = 0;
  for (const [k, v] of Object.entries(body.set ?? {})) {
    if (v === '') {
      if (k in next) changed++;
      delete next[k];
    } else {
      if (next[k] !== v) changed++;
      next[k] = v;
    }
  }
  for (const k of body.remove ?? []) {
    if (k in next) changed++;
    delete next[k];
  }
  return { next, changed };
}
