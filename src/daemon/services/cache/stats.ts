import type { CacheStats } from '../../../api/cache.js';

/** INFO's text as sections of key-value pairs (`# Memory` then `used_memory:123`). */
export function parseInfo(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current = new Map<string, string>();
  sections.set('', current);
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (line.startsWith('#')) {
      current = new Map();
      sections.set(line.slice(1).trim().toLowerCase(), current);
      continue;
    }
    const i = line.indexOf(':');
    if (i > 0) current.set(line.slice(0, i), line.slice(i + 1));
  }
  return sections;
}

const INT_FIELDS = [
  ['used_memory_bytes', 'used_memory'],
  ['maxmemory_bytes', 'maxmemory'],
  ['connected_clients', 'connected_clients'],
  ['blocked_clients', 'blocked_clients'],
  ['keyspace_hits', 'keyspace_hits'],
  ['keyspace_misses', 'keyspace_misses'],
  ['evicted_keys', 'evicted_keys'],
  ['expired_keys', 'expired_keys'],
  ['total_commands_processed', 'total_commands_processed'],
  ['instantaneous_ops_per_sec', 'instantaneous_ops_per_sec'],
  ['uptime_in_seconds', 'uptime_in_seconds'],
] as const;

type StatFields = Omit<CacheStats, 'memorystore' | 'name' | 'note'>;

/**
 * Maps INFO to the stats of spec 3 §4.2. A field the server did not report is omitted, never
 * zeroed; hit_rate appears only after at least one lookup and used_memory_pct only with a cap.
 */
export function statsFromInfo(text: string): StatFields {
  const sections = parseInfo(text);
  const all = new Map<string, string>();
  for (const [name, s] of sections) if (name !== 'keyspace') for (const [k, v] of s) all.set(k, v);
  const out: StatFields = {};
  const int = (key: string) => {
    const v = all.get(key);
    return v !== undefined && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : undefined;
  };
  for (const [field, key] of INT_FIELDS) {
    const v = int(key);
    if (v !== undefined) out[field] = v;
  }
  const human = all.get('used_memory_human');
  if (human !== undefined) out.used_memory_human = human;
  const policy = all.get('maxmemory_policy');
  if (policy !== undefined) out.maxmemory_policy = policy;
  if (out.used_memory_bytes !== undefined && out.maxmemory_bytes) {
    out.used_memory_pct = Math.round((out.used_memory_bytes / out.maxmemory_bytes) * 10_000) / 100;
  }
  if (out.keyspace_hits !== undefined && out.keyspace_misses !== undefined) {
    const lookups = out.keyspace_hits + out.keyspace_misses;
    if (lookups > 0) out.hit_rate = Math.round((out.keyspace_hits / lookups) * 10_000) / 10_000;
  }
  // An empty "# Keyspace" section is a real report of zero keys; a missing section is no report.
  const keyspace = sections.get('keyspace');
  if (keyspace) {
    out.db_keys = 0;
    for (const v of keyspace.values()) out.db_keys += Number(/(?:^|,)keys=(\d+)/.exec(v)?.[1] ?? 0);
  }
  return out;
}
