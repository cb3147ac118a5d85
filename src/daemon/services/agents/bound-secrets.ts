import type { AreaContext } from '../../area.js';
import { ApiError } from '../../http/errors.js';
import { agentStore, type AgentRow } from './store.js';

/**
 * At a deploy (build commit, inside its transaction): writes the bound values into the agent's
 * secret environment, tracking bindings at the newest version. Returns why the deploy cannot
 * proceed when a bound value cannot be read (store sealed, version destroyed): the revision
 * must not start with a stale or missing secret.
 */
export function takeBoundSecrets(ctx: AreaContext, agent: AgentRow): string | undefined {
  const bound = ctx.hooks.boundSecretEnv;
  if (!bound) return undefined;
  try {
    const values = bound(agent.project_id, agent.name);
    if (Object.keys(values).length) agentStore.patchKv(ctx.db, 'agents_secrets', agent.id, values, []);
    return undefined;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return `bound project secrets could not be read, so the revision was not started: ${e.message}`;
  }
}
