import { expect } from 'vitest';
import { workloadConfigFromEnv, type DaemonConfig } from '../../src/daemon/config.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, waitState } from '../agents/helpers.js';

/**
 * A real deployed python function used by the bindings tests: `message` "env:A,B" returns those
 * environment variables (null when absent); "secret:NAME" reads NAME through the shipped
 * get_secret helper, the way a workload reads the store at call time.
 */
export const ENV_PY = `import os
from platform_secrets import get_secret

def handle(event):
    m = event.get("message", "")
    if m.startswith("secret:"):
        try:
            return {"value": get_secret(m[len("secret:"):])}
        except Exception as e:
            return {"error": type(e).__name__ + ": " + str(e)}
    if m.startswith("env:"):
        return {"env": {k: os.environ.get(k) for k in m[len("env:"):].split(",")}}
    return {"reply": m}
`;

export const ENV_JS = `const { getSecret } = require('./.platform/platform_secrets.cjs');

exports.handle = async (event) => {
  const m = event.message || '';
  if (m.startsWith('secret:')) {
    try {
      return { value: await getSecret(m.slice('secret:'.length)) };
    } catch (e) {
      return { error: e.name + ': ' + e.message };
    }
  }
  if (m.startsWith('env:')) return { env: Object.fromEntries(m.slice(4).split(',').map((k) => [k, process.env[k] ?? null])) };
  return { reply: m };
};
`;

/**
 * Daemon overrides giving its workloads a random port window of their own. Every daemon starts
 * allocating at the same default port, so daemons of parallel test runs (and two daemons of one
 * file) race for it between the allocator's trial bind and the workload's own listen.
 */
export function ownWorkloadPorts(extra: Partial<DaemonConfig['workloads']> = {}): Partial<DaemonConfig> {
  const { portMin, portMax } = randomPortWindow();
  return { workloads: { ...workloadConfigFromEnv({}), portMin, portMax, ...extra } };
}

/** 200 ports inside the default workload range, away from its start and below the OS's ephemeral ports. */
export function randomPortWindow(): { portMin: number; portMax: number } {
  const portMin = 22_000 + Math.floor(Math.random() * 40) * 200;
  return { portMin, portMax: portMin + 199 };
}

export interface Deployed {
  id: string;
  revision: () => Promise<string>;
  env: (...keys: string[]) => Promise<Record<string, string | null>>;
  invoke: (message: string) => Promise<any>;
  redeploy: () => Promise<any>;
}

/** Deploys a function through POST /v1/agents and waits until it is ready. */
export async function deployFunction(d: TestDaemon, token: string, project: string, name: string, runtime: 'python' | 'nodejs' = 'python'): Promise<Deployed> {
  const files: Record<string, string> = runtime === 'python' ? { 'main.py': ENV_PY } : { 'index.cjs': ENV_JS };
  const r = await deployForm(d, token, { name, framework: 'function', runtime }, archive(files), `?project=${project}`);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  await waitState(d, token, name, 'ready', project, 60_000);
  const { id } = d.db.prepare('SELECT a.id FROM agents_agents a JOIN acct_projects p ON p.id = a.project_id WHERE a.name = ? AND (p.slug = ? OR p.id = ?)').get(name, project, project) as { id: string };
  const q = `?project=${project}`;
  const invoke = async (message: string) => {
    const res = await d.api('POST', `/v1/agents/${name}/invoke${q}`, { token, body: { message } });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  return {
    id,
    invoke,
    revision: async () => (await d.api('GET', `/v1/agents/${name}${q}`, { token })).body.latest_revision,
    env: async (...keys) => (await invoke(`env:${keys.join(',')}`)).env,
    async redeploy() {
      const before = (await d.api('GET', `/v1/agents/${name}${q}`, { token })).body.latest_revision;
      const rd = await d.api('POST', `/v1/agents/${name}/redeploy${q}`, { token });
      expect(rd.status, rd.text).toBeLessThan(300);
      const deadline = Date.now() + 60_000;
      for (;;) {
        const a = (await d.api('GET', `/v1/agents/${name}${q}`, { token })).body;
        if (a.state === 'failed' || (a.state === 'ready' && a.latest_revision !== before) || Date.now() > deadline) return a;
        await new Promise((res) => setTimeout(res, 25));
      }
    },
  };
}
