import type { AgentTrafficTarget, ServedTraffic } from '../../../api/agents.js';
import { Splitter } from '../../traffic/splitter.js';
import type { AgentRow } from './store.js';

/**
 * An agent's traffic split (docs/decisions/agents-traffic.md): what is stored, what it resolves
 * to, and the per-request pick. Pure over the agent row, so views and routing read the same.
 */

/** No stored split: every request to the latest revision that serves, as before splits existed. */
export const DEFAULT_SPLIT: AgentTrafficTarget[] = [{ latest_revision: true, percent: 100 }];

export function splitOf(agent: Pick<AgentRow, 'traffic'>): AgentTrafficTarget[] {
  return agent.traffic ? (JSON.parse(agent.traffic) as AgentTrafficTarget[]) : DEFAULT_SPLIT;
}

/** What a split is stored as: null for the default, so a later change to the default needs no rewrite. */
export function storedSplit(split: AgentTrafficTarget[]): string | null {
  const isDefault = split.length === 1 && split[0]!.latest_revision === true && split[0]!.percent === 100;
  return isDefault ? null : JSON.stringify(split);
}

/**
 * The revision a latest_revision target goes to: the newest that serves. None before a first
 * deploy step starts (a failed first build serves nothing); requests then go where the
 * supervisor's current revision says, as before splits existed.
 */
export const latestServing = (agent: Pick<AgentRow, 'serving_revision'>) => agent.serving_revision ?? undefined;

/**
 * The split resolved to revisions: latest targets replaced by the revision they follow, shares
 * of the same revision merged, 0 % dropped; in the split's order. Empty before anything serves.
 */
export function servedTraffic(agent: Pick<AgentRow, 'traffic' | 'serving_revision'>): ServedTraffic[] {
  const latest = latestServing(agent);
  const merged = new Map<string, number>();
  for (const t of splitOf(agent)) {
    const revision = t.latest_revision ? latest : t.revision_name;
    if (!revision || !t.percent) continue;
    merged.set(revision, (merged.get(revision) ?? 0) + t.percent);
  }
  return [...merged].map(([revision_name, percent]) => ({ revision_name, percent }));
}

/**
 * Per-request picks by smooth weighted round robin, the serverless router's algorithm: a 50/50
 * split alternates exactly, a 10 % target gets one request in every ten. One rotation per agent,
 * kept while its resolved split stays the same; it restarts with the daemon.
 */
export class TrafficRouter {
  private readonly rotations = new Map<string, { signature: string; splitter: Splitter }>();

  /** The revision this request goes to; undefined (the supervisor's current one) before any revision serves. */
  pick(agent: AgentRow): string | undefined {
    const served = servedTraffic(agent);
    if (served.length <= 1) return served[0]?.revision_name;
    const signature = JSON.stringify(served);
    let rotation = this.rotations.get(agent.id);
    if (rotation?.signature !== signature) {
      rotation = { signature, splitter: new Splitter(served.map((s) => ({ revision: s.revision_name, percent: s.percent }))) };
      this.rotations.set(agent.id, rotation);
    }
    return rotation.splitter.next();
  }

  forget(agentId: string): void {
    this.rotations.delete(agentId);
  }
}
