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
