import type { AreaContext } from '../../area.js';

/**
 * One count of a project's quota use for every area (spec 1 §8.3): the cap written at project
 * creation and the use every area reports through hooks.quotaUsage, so agents and serverless
 * revisions fill the same Services quota and the readout is what enforcement compares.
 */

/** The project's cap of `resource`; 0 means unlimited. */
export function quotaLimit(ctx: AreaContext, projectId: string, resource: string): number {
  const row = ctx.db.prepare('SELECT value FROM acct_project_quotas WHERE project_id = ? AND resource = ?').get(projectId, resource) as { value: number } | undefined;
  return row?.value ?? 0;
}

/** Live use of `resource` summed over the areas that report it, leaving out the sources named in `except`. */
export function quotaUsed(ctx: AreaContext, projectId: string, resource: string, except: string[] = []): number {
  let used = 0;
  for (const hook of ctx.hooks.quotaUsage) {
    const r = hook(projectId);
    if (!except.includes(r.source)) used += r.used[resource] ?? 0;
  }
  return used;
}

/** The refusal sentence when `more` entries of Services do not fit, else undefined. */
export function servicesRefusal(ctx: AreaContext, projectId: string, more: number, except: string[] = []): string | undefined {
  const limit = quotaLimit(ctx, projectId, 'services');
  if (!limit) return undefined;
  const used = quotaUsed(ctx, projectId, 'services', except);
  if (used + more <= limit) return undefined;
  return `project at its service limit: ${used} of ${limit} services used (an agent or function holds one, every serverless revision two)`;
}

/**
 * What running instances hold against the four CPU and memory rows of spec 1 §8.3, in the rows'
 * units: CPU in cores, memory in MiB. Sums go through addReservations, which rounds them to the
 * millicore and the MiB, so floating point never shows in a readout or a comparison.
 */
export interface Reservation {
  cpu_requests: number;
  memory_requests: number;
  cpu_limits: number;
  memory_limits: number;
}

export const RESERVATION_ROWS = ['cpu_requests', 'memory_requests', 'cpu_limits', 'memory_limits'] as const;

const MiB = 1024 ** 2;

/** An amount of CPU and memory a container may use at most, or reserves. */
export interface Amount {
  cpus: number;
  memoryBytes: number;
}

/** The proxy that fronts every instance of agents, functions, MCP servers and serverless services (spec 1 §8.3). */
export const PROXY: Amount = { cpus: 0.5, memoryBytes: 256 * MiB };

/** Spec 1 §8.4: a CPU ceiling reserves 10 percent of itself, never below 100m. */
export const cpuReservation = (cpus: number) => Math.max(Math.round(cpus * 100) / 1000, 0.1);

/**
 * One container's share: the ceiling counts against the limits, and against the requests what it
 * reserves (explicit requests where the workload states them, else §8.4's rule: 10 percent of the
 * CPU, the whole memory).
 */
export function containerReservation(limits: Amount, requests?: Partial<Amount>): Reservation {
  return {
    cpu_requests: requests?.cpus ?? cpuReservation(limits.cpus),
    memory_requests: (requests?.memoryBytes ?? limits.memoryBytes) / MiB,
    cpu_limits: limits.cpus,
    memory_limits: limits.memoryBytes / MiB,
  };
}

/** An instance of an instance size (§8.4) with its proxy: a medium one holds 1.5 CPU and 1.25 GiB of limits. */
export function proxiedReservation(limits: Amount, requests?: Partial<Amount>): Reservation {
  return addReservations([containerReservation(limits, requests), containerReservation(PROXY)]);
}

/** The sum of several instances' reservations, rounded to a millicore and a MiB. */
export function addReservations(list: Reservation[]): Reservation {
  const sum = (k: keyof Reservation, unit: number) => Math.round(list.reduce((n, r) => n + r[k] * unit, 0)) / unit;
  return { cpu_requests: sum('cpu_requests', 1000), memory_requests: sum('memory_requests', 1), cpu_limits: sum('cpu_limits', 1000), memory_limits: sum('memory_limits', 1) };
}

const unitOf = (resource: string) => (resource.startsWith('cpu') ? 'CPU' : 'MiB');

/**
 * The refusal sentence when one more instance holding `reservation` does not fit the project's
 * running-instances cap or one of its CPU and memory caps (0 means unlimited), else undefined.
 * Every area's running instances fill the same quotas (spec 1 §8.3).
 */
export function instanceRefusal(ctx: AreaContext, projectId: string, reservation: Reservation): string | undefined {
  const limits = ctx.db.prepare('SELECT resource, value FROM acct_project_quotas WHERE project_id = ? AND value > 0').all(projectId) as Array<{ resource: string; value: number }>;
  if (!limits.length) return undefined;
  const capOf = (resource: string) => limits.find((l) => l.resource === resource)?.value ?? 0;
  // One reading of every area's use, so the five rows are compared against the same moment.
  const reports = ctx.hooks.quotaUsage.map((hook) => hook(projectId).used);
  const usedOf = (resource: string) => reports.reduce((n, used) => n + (used[resource] ?? 0), 0);
  const instances = capOf('instances');
  if (instances) {
    const running = usedOf('instances');
    if (running >= instances) return `project at its running-instance limit: ${running} of ${instances} instances in use`;
  }
  for (const resource of RESERVATION_ROWS) {
    const limit = capOf(resource);
    if (!limit) continue;
    const used = addReservations([{ ...EMPTY, [resource]: usedOf(resource) }])[resource];
    const after = addReservations([{ ...EMPTY, [resource]: used }, reservation])[resource];
    if (after > limit) {
      const unit = unitOf(resource);
      return `project at its ${resource} limit: ${used} of ${limit} ${unit} in use, and one more instance needs ${reservation[resource]} ${unit}`;
    }
  }
  return undefined;
}

const EMPTY: Reservation = { cpu_requests: 0, memory_requests: 0, cpu_limits: 0, memory_limits: 0 };
