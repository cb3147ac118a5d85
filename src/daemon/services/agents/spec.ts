import { agentSpecRoutes, REDACTED } from '../../../api/agent-spec.js';
import type { AgentConfig } from '../../../api/agents.js';
import type { Router } from '../../http/router.js';
import { ownedAgent } from './access.js';
import type { Deps } from './service.js';
import { agentStore } from './store.js';

/** Key names that say "credential" (API_KEY, DB_PASSWORD, GITHUB_TOKEN, CLIENT_SECRET, AUTH_HEADER, …). */
const SECRET_KEY_RE = /(^|_)(KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|PASS|CREDENTIALS?|AUTH|AUTHORIZATION|PRIVATE|SIGNING|DSN|COOKIE|SESSION)(_|$)/i;
/**
 * Values that are credentials whatever their key: provider key prefixes (OpenAI sk-, GitHub ghp_/gho_/
 * github_pat_, Slack xox?-, AWS AKIA/ASIA, Google AIza, Stripe sk_live_/rk_live_), PEM blocks, JWTs,
 * URLs with a password (scheme://user:pass@host), and the platform's own key prefixes.
 */
const SECRET_VALUE_RES = [
  /^sk-[A-Za-z0-9_-]{16,}/,
  /^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/,
  /^github_pat_[A-Za-z0-9_]{20,}/,
  /^xox[abposr]-[A-Za-z0-9-]{10,}/,
  /^(AKIA|ASIA)[A-Z0-9]{16}$/,
  /^AIza[0-9A-Za-z_-]{30,}/,
  /^(sk|rk)_(live|test)_[A-Za-z0-9]{16,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/,
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i,
  /^(pk|svc|wk)_[A-Za-z0-9]{20,}/,
];

export function looksSecret(key: string, value: string): boolean {
  return SECRET_KEY_RE.test(key) || SECRET_VALUE_RES.some((re) => re.test(value));
}

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
