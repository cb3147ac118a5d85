import { agentRoutes, type AgentView } from '../api/agents.js';
import type { ApiClient } from '../client/api-client.js';
import { deployDirectory } from '../client/deploy.js';

/** Why a deploy runs: the first one, a save (with the first changed path and when it was seen), or `r`. */
export type Trigger = { kind: 'start' } | { kind: 'save'; path: string; at: number } | { kind: 'key' };

export type DeployOutcome =
  | { ok: true; agent: AgentView; revision: string; ms: number; sinceSaveMs?: number }
  | {
      ok: false;
      /** The agent as it stands after the failure (undefined when nothing was uploaded). */
      agent?: AgentView;
      /** The revision that failed (absent when the folder could not even be packed or detected). */
      revision?: string;
      /** The revision that keeps serving, if any. */
      serving?: string;
      error: string;
      ms: number;
    };

export interface DeployHooks {
  onStart(trigger: Trigger): void;
  onState(agent: AgentView): void;
  onBuildOutput?: (chunk: string) => void;
  onDone(outcome: DeployOutcome, trigger: Trigger): void;
}

export interface DeployTarget {
  dir: string;
  name: string;
  project?: string;
}

/** The agent poll while waiting: short, since a function's redeploy takes a few hundred ms in all. */
const POLL_MS = 25;

/**
 * Deploys a folder again and again through the same client as `platform deploy` (one connection,
 * no new CLI process per save). One deploy runs at a time; saves during a deploy are coalesced
 * into one more deploy afterwards, timed from the earliest of them.
 */
export class DeployLoop {
  private running = false;
  private pending: Trigger | undefined;
  private stopped = false;

  constructor(
    private readonly client: ApiClient,
    private readonly target: DeployTarget,
    private readonly hooks: DeployHooks,
  ) {}

  request(trigger: Trigger): void {
    if (this.stopped) return;
    if (this.running) {
      // Keep the earliest save: save-to-serving is measured from it.
      if (!this.pending || (this.pending.kind !== 'save' && trigger.kind === 'save')) this.pending = trigger;
      return;
    }
    this.running = true;
    void this.drain(trigger);
  }

  /** True while a deploy runs (the daemon keeps building it if the loop stops meanwhile). */
  get busy(): boolean {
    return this.running;
  }

  stop(): void {
    this.stopped = true;
  }

  private async drain(first: Trigger): Promise<void> {
    let next: Trigger | undefined = first;
    while (next && !this.stopped) {
      const trigger: Trigger = next;
      this.pending = undefined;
      this.hooks.onStart(trigger);
      const outcome = await this.deployOnce(trigger);
      if (!this.stopped) this.hooks.onDone(outcome, trigger);
      next = this.pending;
    }
    this.running = false;
  }

  private async deployOnce(trigger: Trigger): Promise<DeployOutcome> {
    const started = Date.now();
    const { dir, name, project } = this.target;
    try {
      const result = await deployDirectory(this.client, {
        dir,
        name,
        project,
        wait: true,
        pollMs: POLL_MS,
        onState: (a) => this.hooks.onState(a),
        onBuildOutput: this.hooks.onBuildOutput,
      });
      const done = Date.now();
      return {
        ok: true,
        agent: result.agent,
        revision: result.agent.serving_revision ?? result.agent.latest_revision ?? '',
        ms: done - started,
        ...(trigger.kind === 'save' ? { sinceSaveMs: done - trigger.at } : {}),
      };
    } catch (e) {
      const ms = Date.now() - started;
      const agent = await this.client.call(agentRoutes.get, { params: { name }, query: project ? { project } : {} }).catch(() => undefined);
      // Only a revision newer than the serving one failed; otherwise the failure came before an upload.
      const failedRevision = agent?.latest_revision && agent.latest_revision !== agent.serving_revision ? agent.latest_revision : undefined;
      const uploaded = failedRevision || agent?.state === 'failed';
      return {
        ok: false,
        agent,
        revision: uploaded ? agent?.latest_revision : undefined,
        serving: agent?.serving_revision && agent.serving_revision !== agent.latest_revision ? agent.serving_revision : undefined,
        error: uploaded && agent?.message ? agent.message : (e as Error).message,
        ms,
      };
    }
  }
}
