import { describe, expect, it } from 'vitest';
import { parseInfo, statsFromInfo } from '../../src/daemon/services/cache/stats.js';

const info = (sections: Record<string, string[]>) =>
  Object.entries(sections)
    .map(([name, lines]) => [`# ${name}`, ...lines].join('\r\n'))
    .join('\r\n\r\n') + '\r\n';

/** INFO to stats mapping (spec 3 §4.2): absent fields omitted, never zeroed. */
describe('cache stats from INFO', () => {
  it('maps every reported field and derives percentages and the hit rate', () => {
    const s = statsFromInfo(
      info({
        Server: ['redis_version:7.0.15', 'uptime_in_seconds:42'],
        Clients: ['connected_clients:3', 'blocked_clients:1'],
        Memory: ['used_memory:1048576', 'used_memory_human:1.00M', 'maxmemory:4194304', 'maxmemory_policy:allkeys-lru'],
        Stats: ['total_commands_processed:100', 'instantaneous_ops_per_sec:7', 'expired_keys:2', 'evicted_keys:5', 'keyspace_hits:3', 'keyspace_misses:1'],
        Keyspace: ['db0:keys=10,expires=2,avg_ttl=0', 'db3:keys=5,expires=0,avg_ttl=0'],
      }),
    );
    expect(s).toEqual({
      used_memory_bytes: 1048576,
      used_memory_human: '1.00M',
      maxmemory_bytes: 4194304,
      maxmemory_policy: 'allkeys-lru',
      used_memory_pct: 25,
      connected_clients: 3,
      blocked_clients: 1,
      keyspace_hits: 3,
      keyspace_misses: 1,
      hit_rate: 0.75,
      evicted_keys: 5,
      expired_keys: 2,
      total_commands_processed: 100,
      instantaneous_ops_per_sec: 7,
      uptime_in_seconds: 42,
      db_keys: 15,
    });
  });

  it('omits what the server did not report instead of zeroing it', () => {
    const s = statsFromInfo(info({ Memory: ['used_memory:2048', 'maxmemory:0'] }));
    expect(s).toEqual({ used_memory_bytes: 2048, maxmemory_bytes: 0 });
    // No cap: no percentage. No lookups: no hit rate. No Keyspace section: no db_keys.
    expect(s).not.toHaveProperty('used_memory_pct');
    expect(s).not.toHaveProperty('hit_rate');
    expect(s).not.toHaveProperty('db_keys');
  });

  it('an empty Keyspace section is a real zero; zero lookups give no hit rate', () => {
    const s = statsFromInfo(info({ Stats: ['keyspace_hits:0', 'keyspace_misses:0'], Keyspace: [] }));
    expect(s).toEqual({ keyspace_hits: 0, keyspace_misses: 0, db_keys: 0 });
  });

  it('ignores non-numeric values for numeric fields', () => {
    expect(statsFromInfo(info({ Clients: ['connected_clients:many'] }))).toEqual({});
    expect(parseInfo('# Server\r\nredis_version:7.0.15\r\n').get('server')?.get('redis_version')).toBe('7.0.15');
  });
});
