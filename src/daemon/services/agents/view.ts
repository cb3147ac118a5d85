import type { AgentView, RevisionView } from '../../../api/agents.js';
import { LIMITS } from '../../../api/agents.js';
import type { DaemonConfig } from '../../config.js';
import type { AgentRow, RevisionRow } from './store.js';

/**
 * Public address of a workload. Locally the daemon itself routes by Host header, so the address
 * is http on the daemon's port under apps.localhost (DESIGN.md); production uses https and the
 * platform's apps domain.
 */
export const publicUrl = (config: DaemonConfig, name: string, short: string) => `http://${name}-${short}.apps.localhost:${config.port}`;

/** Agent or function view of spec 1 §2.2. */
export function agentView(config: DaemonConfig, row: AgentRow, short: string): AgentView {
  const pub = publicUrl(config, row.name, short);
  return {
    name: row.name,
    state: row.state,
    ready: row.state === 'ready',
    kind: row.kind,
    framework: row.kind === 'function' && row.runtime && row.runtime !== 'python' ? `function-${row.runtime}` : row.framework,
    ...(row.runtime ? { runtime: row.runtime } : {}),
    ...(row.image ? { image: row.image } : {}),
    // One loopback network locally: the internal address is the Host-routed one.
    url: pub,
    public_url: pub,
    ...(row.latest_revision ? { latest_revision: row.latest_revision } : {}),
    ...(row.message ? { message: row.message } : {}),
    owner: row.owner ?? '',
    project_id: row.project_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function revisionView(agent: string, r: RevisionRow): RevisionView {
  return {
    name: r.name,
    agent,
    reason: r.reason,
    build_id: r.build_id,
    ...(r.image ? { image: r.image } : {}),
    env_keys: Object.keys(JSON.parse(r.env) as Record<string, string>).sort(),
    secret_keys: JSON.parse(r.secret_keys) as string[],
    config: JSON.parse(r.config),
    created_at: r.created_at,
  };
}

/** First 4000 characters of build output plus a marker saying how much was cut (spec 1 §3). */
export function buildMessage(output: string): string {
  const max = LIMITS.buildMessageChars;
  if (output.length <= max) return output;
  return `${output.slice(0, max)}\n[build output truncated: ${output.length - max} more characters]`;
}

export const clampTimeout = (s: number | undefined) => Math.min(LIMITS.timeoutMaxSeconds, Math.max(1, s ?? LIMITS.timeoutDefaultSeconds));
