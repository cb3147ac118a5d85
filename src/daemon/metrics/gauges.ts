/**
 * The gauges `/metrics` reads from the areas at scrape time (docs/decisions/operations.md). Each
 * area reports samples of these families through `hooks.metricsReaders`; label values name
 * resources (project short, resource name, a state from a fixed set), never request data, so
 * the number of series is bounded by the number of resources.
 */
export const GAUGES = {
  platform_workloads: { help: 'Workloads by kind (agent, function, service, mcp) and state', labels: ['kind', 'state'] },
  platform_workload_instances: { help: 'Running workload instances by kind (agent, function, service, mcp)', labels: ['kind'] },
  platform_messaging_backlog_messages: { help: 'Messages not yet acknowledged, per subscription', labels: ['project', 'topic', 'subscription'] },
  platform_vector_points: { help: 'Points per vector index (refreshed like the index counts)', labels: ['project', 'index'] },
  platform_cache_memory_bytes: { help: 'Memory used per cache instance (INFO used_memory; absent when the server did not answer)', labels: ['project', 'cache'] },
  platform_cache_maxmemory_bytes: { help: 'Memory cap per cache instance (INFO maxmemory)', labels: ['project', 'cache'] },
  platform_sandbox_pool: { help: 'Code sandbox pool: warm sandboxes, calls in flight, and the warm target', labels: ['state'] },
} as const;

export type GaugeName = keyof typeof GAUGES;

export interface GaugeSample {
  name: GaugeName;
  labels: Record<string, string>;
  value: number;
}

/** The kinds of workloads whose instances start on demand (the cold-start series). */
export type WorkloadKind = 'agent' | 'function' | 'service' | 'mcp';
