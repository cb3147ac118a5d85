import type { AgentView, RevisionView } from '../../../api/agents.js';
import { LIMITS } from '../../../api/agents.js';
import type { DaemonConfig } from '../../config.js';
import { workloadUrl } from '../../public-address.js';
import type { AgentRow, RevisionRow } from './store.js';
import { servedTraffic, splitOf } from './traffic.js';

/**
 * Public address of a workload. Locally the daemon itself routes by Host header, so the address
 * is http on the daemon's port under apps.localhost (DESIGN.md); production uses https and the
 * platform's apps domain.
 */
export const publicUrl = (config: DaemonConfig, name: string, short: string) => workloadUrl(config, `${name}-${short}`);

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
    ...(row.serving_revision ? { serving_revision: row.serving_revision } : {}),
    traffic: splitOf(row),
    active_traffic: servedTraffic(row),
    ...(row.message ? { message: row.message } : {}),
    owner: row.owner ?? '',
    project_id: row.project_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A revision with its share of the served split (`shares`: revision name to percent). */
export function revisionView(agent: string, r: RevisionRow, shares: ReadonlyMap<string, number>): RevisionView {
  const percent = shares.get(r.name) ?? 0;
  return {
    name: r.name,
    agent,
    state: r.state,
    serving: percent > 0,
    traffic_percent: percent,
    ...(r.message ? { message: r.message } : {}),
    reason: r.reason,
    build_id: r.build_id,
    ...(r.image ? { image: r.image } : {}),
    env_keys: Object.keys(JSON.parse(r.env) as Record<string, string>).sort(),
    secret_keys: JSON.parse(r.secret_keys) as string[],
    config: JSON.parse(r.config),
    created_at: r.created_at,
  };
}

/**
 * A failed build's message: a headline naming the cause, then the last 4000 characters of the
 * output (where compilers and pip put their final error), cut at a line start, after a marker
 * saying how much came before and where the whole log is.
 */
export function buildMessage(agent: string, headline: string, output: string): string {
  const max = LIMITS.buildMessageChars;
  let tail = output.trimEnd();
  if (tail.length > max) {
    tail = tail.slice(-max);
    const nl = tail.indexOf('\n');
    if (nl >= 0 && nl < 400) tail = tail.slice(nl + 1);
    tail = `[build output truncated: ${output.trimEnd().length - tail.length} earlier characters; the whole log: platform logs ${agent} --build]\n${tail}`;
  }
  return `${headline}\n${tail}`;
}

/** The platform's own step lines, which say that a step failed but never why. */
const OWN_LINE =
  /^(\$ |build step exited with code|pip install -r requirements\.txt exited with code|build [0-9a-f-]{36} for |source: \d+ files|build finished|Step \d+\/\d+ :|The command '.*' returned a non-zero code)/;
const ERROR_LINE = /\berror\b|^\S+:\d+(:\d+)?:|\bfatal\b|\bcannot\b|No matching distribution|No module named|Traceback|Exception\b/i;
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * The line that names a failed build's cause: the last one that reads as an error (a compiler's
 * `file:line:` diagnostic, pip's final `ERROR:`), else the last line that is not a step line.
 */
export function buildCause(output: string): string {
  const lines = output
    .slice(-64 * 1024)
    .replace(ANSI, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !OWN_LINE.test(l));
  for (let i = lines.length - 1; i >= 0; i--) if (ERROR_LINE.test(lines[i]!)) return lines[i]!.slice(0, 500);
  return (lines.at(-1) ?? 'the build stopped without output').slice(0, 500);
}

export const clampTimeout = (s: number | undefined) => Math.min(LIMITS.timeoutMaxSeconds, Math.max(1, s ?? LIMITS.timeoutDefaultSeconds));
