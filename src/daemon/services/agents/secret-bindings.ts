import { rollSettings, type Deps } from './service.js';
import { agentStore } from './store.js';

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
