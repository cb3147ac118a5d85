import { agentSpecRoutes, REDACTED } from '../../../api/agent-spec.js';
import type { AgentConfig } from '../../../api/agents.js';
import type { Router } from '../../http/router.js';
import { ownedAgent } from './access.js';
import type { Deps } from './service.js';
import { agentStore } from './store.js';
import { looksSecret } from '../../secret-looking.js';

/** GET /v1/agents/{name}/spec, registered by the agents area beside its other routes. */
export function registerSpecRoute(r: Router, d: Deps): void {
  r.handle(agentSpecRoutes.spec, ({ principal, params, query }) => {
    const { agent } = ownedAgent(d.ctx, principal!, params.name, query.project);
    const env: Record<string, string> = {};
    const redacted: string[] = [];
    for (const [k, v] of Object.entries(agentStore.kv(d.ctx.db, 'agents_env', agent.id)).sort(([a], [b]) => a.localeCompare(b))) {
      if (looksSecret(k, v)) redacted.push(k);
      env[k] = looksSecret(k, v) ? REDACTED : v;
    }
    // Secret keys are read from the key column alone: their sealed values are never opened here.
    const secrets = (d.ctx.db.prepare('SELECT key FROM agents_secrets WHERE agent_id = ? ORDER BY key').all(agent.id) as Array<{ key: string }>).map((s) => s.key);
    return {
      agent: agent.name,
      spec: {
        name: agent.name,
        kind: agent.kind,
        framework: agent.framework,
        ...(agent.runtime ? { runtime: agent.runtime } : {}),
        config: JSON.parse(agent.config) as AgentConfig,
        env,
        secrets,
        ...(agent.latest_revision ? { revision: agent.latest_revision } : {}),
      },
      redacted,
    };
  });
}
