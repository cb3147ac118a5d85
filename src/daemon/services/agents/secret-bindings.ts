import type { AreaContext } from '../../area.js';
import { ApiError } from '../../http/errors.js';
import { rollSettings, type Deps } from './service.js';
import { agentStore, type AgentRow } from './store.js';

/**
 * The agents side of project secret bindings (spec 2 §4.1): the secrets area owns bindings and
 * values; this answers which agent a name means and writes bound values into the agent's stored
 * secret environment (agents_secrets, sealed at rest), rolling a settings revision and recycling
 * the running instance after the commit so the next request serves the new environment.
 */
export function registerSecretBindings(d: Deps): void {
  const { db } = d.ctx;
  d.ctx.hooks.agentSecrets = {
    find(projectId, name) {
      const a = agentStore.byName(db, projectId, name);
      return a ? { id: a.id } : undefined;
    },
    applySecretEnv(projectId, agentId, change) {
      const agent = agentStore.byId(db, agentId);
      if (!agent || agent.project_id !== projectId) return { revisionRolled: false };
      // Removal deletes rows without opening any value, so unbinding works while the store is sealed.
      agentStore.patchKv(db, 'agents_secrets', agentId, change.set, change.remove);
      const rolled = rollSettings(d, agent, 'secrets');
      return { revisionRolled: rolled, afterCommit: rolled ? () => d.rt.recycle(agentId, 'secret bindings changed') : undefined };
    },
  };
}

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
    return `bound project secrets could not be read, so the revision was not created: ${e.message}`;
  }
}
