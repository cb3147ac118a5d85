/** Default project quotas of spec 1 §8.3, written as rows at project creation (0 means unlimited). */
export const DEFAULT_QUOTAS = [
  { resource: 'instances', value: 50, unit: 'count' },
  { resource: 'services', value: 30, unit: 'count' },
  { resource: 'cpu_requests', value: 10, unit: 'cpu' },
  { resource: 'memory_requests', value: 20 * 1024, unit: 'MiB' },
  { resource: 'cpu_limits', value: 20, unit: 'cpu' },
  { resource: 'memory_limits', value: 40 * 1024, unit: 'MiB' },
] as const;
