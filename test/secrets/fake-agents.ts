import { randomUUID } from 'node:crypto';
import type { TestDaemon } from '../helpers/daemon.js';

/**
 * TEST-ONLY stand-in for the agents area's `hooks.agentSecrets` (the real one is wired when the
 * agents branch merges; see docs/decisions/secrets.md). It keeps each agent's stored secret
 * environment and revision counter in a table of the same database, so the secrets area's
 * transaction really covers it: a rolled-back apply leaves it untouched.
 */
export function fakeAgents(d: TestDaemon) {
  d.db.exec(`CREATE TABLE IF NOT EXISTS test_agents (id TEXT PRIMARY KEY, project_id TEXT, name TEXT, revision INTEGER NOT NULL DEFAULT 1);
             CREATE TABLE IF NOT EXISTS test_agent_env (agent_id TEXT, k TEXT, v TEXT, PRIMARY KEY (agent_id, k));`);
  const calls: Array<{ agentId: string; set: string[]; remove: string[] }> = [];
  d.app.ctx.hooks.agentSecrets = {
    find: (projectId, name) => d.db.prepare('SELECT id FROM test_agents WHERE project_id = ? AND name = ?').get(projectId, name) as { id: string } | undefined,
    applySecretEnv(_projectId, agentId, change) {
      calls.push({ agentId, set: Object.keys(change.set), remove: change.remove });
      for (const [k, v] of Object.entries(change.set)) d.db.prepare('INSERT OR REPLACE INTO test_agent_env (agent_id, k, v) VALUES (?, ?, ?)').run(agentId, k, v);
      for (const k of change.remove) d.db.prepare('DELETE FROM test_agent_env WHERE agent_id = ? AND k = ?').run(agentId, k);
      d.db.prepare('UPDATE test_agents SET revision = revision + 1 WHERE id = ?').run(agentId);
      return { revisionRolled: true };
    },
  };
  return {
    calls,
    add(projectId: string, name: string): string {
      const id = randomUUID();
      d.db.prepare('INSERT INTO test_agents (id, project_id, name) VALUES (?, ?, ?)').run(id, projectId, name);
      return id;
    },
    env(agentId: string): Record<string, string> {
      const rows = d.db.prepare('SELECT k, v FROM test_agent_env WHERE agent_id = ? ORDER BY k').all(agentId) as { k: string; v: string }[];
      return Object.fromEntries(rows.map((r) => [r.k, r.v]));
    },
    revision: (agentId: string) => (d.db.prepare('SELECT revision FROM test_agents WHERE id = ?').get(agentId) as { revision: number }).revision,
  };
}
