import { cacheRoutes } from '../../../api/cache.js';
import { formatBytes } from '../model.js';
import type { StatusTarget } from '../loaders.js';
import { ageText, linesOf, oneLine, settle } from './read.js';

/**
 * A cache: size class, memory used / max, hit rate, keys, eviction policy, persistence, TLS and
 * address. Live figures come from the server (the stats route); only a ready instance has them.
 * TLS is the external endpoint's (served by redis-server itself); the address inside is plain.
 */
export async function cacheDetails(t: StatusTarget, name: string): Promise<string[]> {
  const params = { projectID: t.project, name };
  const got = await settle(t.client.call(cacheRoutes.get, { params }));
  const out = linesOf(`cache ${name}`, got, (c) => [
    `cache ${c.name}: ${c.state}${c.message ? ` · ${oneLine(c.message)}` : ''}`,
    `size class ${c.size_class} · memory limit ${c.memory_limit} · maxmemory ${c.maxmemory} · version ${c.version || 'default'}`,
    `eviction ${c.maxmemory_policy}`,
    `persistence ${c.persistence.enabled ? `on (append-only, ${c.persistence.size})` : 'off (data lives in memory only)'}`,
    `address ${c.connection.host}:${c.connection.port} (user ${c.connection.username}, password in ${c.connection.credential_secret})`,
    `TLS ${c.external_exposure ? (c.external_endpoint ? `on the external endpoint ${c.external_endpoint}` : 'exposed, endpoint not published yet') : 'off (not exposed; the address above is plain)'}`,
    `replicas ${c.ready_replicas}/${c.replicas}`,
  ]);
  if (got.ok && !got.value.ready) return [...out, '', 'live stats: none until the instance is ready'];
  const stats = await settle(t.client.call(cacheRoutes.stats, { params }));
  out.push(
    '',
    ...linesOf('live stats', stats, (s) => [
      `memory ${s.used_memory_human ?? formatBytes(s.used_memory_bytes)} of ${s.maxmemory_bytes ? formatBytes(s.maxmemory_bytes) : got.ok ? got.value.maxmemory : '-'}${s.used_memory_pct === undefined ? '' : ` (${s.used_memory_pct.toFixed(1)}%)`}`,
      `hit rate ${s.hit_rate === undefined ? '-' : `${(s.hit_rate * 100).toFixed(1)}%`} (${s.keyspace_hits ?? 0} hits, ${s.keyspace_misses ?? 0} misses) · keys ${s.db_keys ?? '-'}`,
      `evicted ${s.evicted_keys ?? 0} · expired ${s.expired_keys ?? 0} · clients ${s.connected_clients ?? '-'} · ops/s ${s.instantaneous_ops_per_sec ?? '-'}${s.uptime_in_seconds === undefined ? '' : ` · up ${ageText(s.uptime_in_seconds)}`}`,
    ]),
  );
  return out;
}
