import type { AreaContext } from './area.js';

/** The first area's description of who holds `name` in the project (hooks.nameInUse), if any. */
export function nameTaken(ctx: AreaContext, projectId: string, name: string): string | undefined {
  for (const hook of ctx.hooks.nameInUse) {
    const who = hook(projectId, name);
    if (who) return who;
  }
  return undefined;
}
