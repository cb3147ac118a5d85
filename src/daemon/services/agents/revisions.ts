/**
 * Revision records (spec 1 §9) and the agent state that follows from them: a revision is rolled
 * by a build or a settings change, deploys, serves or fails; the agent reads ready whenever one
 * serves. Every function here runs inside the caller's transaction unless it says otherwise.
 */
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import { agentStore, type AgentRow, type BuildRow, type RevisionRow } from './store.js';
import { buildMessage } from './view.js';

/** Rolls an immutable revision from the agent's current settings; `failed` records a build that produced nothing. */
export function rollRevision(
  ctx: AreaContext,
  agent: AgentRow,
  reason: RevisionRow['reason'],
  buildId: string,
  image: string | null,
  artifact: string | null,
  state?: 'failed',
): RevisionRow {
  const { db, clock } = ctx;
  const seq = agentStore.nextRevisionSeq(db, agent.id);
  const built = reason === 'deploy' || reason === 'redeploy';
  const row: RevisionRow = {
    id: newId(),
    agent_id: agent.id,
    seq,
    name: `${agent.name}-${String(seq).padStart(5, '0')}`,
    reason,
    build_id: buildId,
    image,
    artifact,
    env: JSON.stringify(agentStore.kv(db, 'agents_env', agent.id)),
    secret_keys: JSON.stringify(agentStore.kvKeys(db, 'agents_secrets', agent.id)),
    config: agent.config,
    state: state ?? (built ? 'deploying' : 'ready'),
    message: '',
    created_at: isoNow(clock),
    // Spec 2 §4.2: the servers an agent sees are fixed when its revision is made.
    mcp_servers: JSON.stringify(ctx.hooks.mcpServers?.ready(agent.project_id) ?? []),
  };
  agentStore.insertRevision(db, row);
  const change: Partial<AgentRow> = { latest_revision: row.name };
  if (!state) {
    if (image) change.image = image;
    // A build's revision serves once its deploying step starts it; a settings revision at once.
    if (built) Object.assign(change, { state: 'deploying', message: '' });
    else {
      change.serving_revision = row.name;
      // The newest revision serves again: an older one's failure is no longer the agent's news.
      if (agent.state === 'ready') change.message = '';
    }
  }
  agentStore.update(db, agent.id, change, isoNow(clock));
  return row;
}

/**
 * A failed build still rolls a revision, in state failed with the output's last lines, so it
 * stays listed and its whole log readable; the agent stays ready when an older revision serves.
 */
export function failBuild(ctx: AreaContext, agent: AgentRow, build: BuildRow, output: string, cause: string): void {
  const { db, clock } = ctx;
  agentStore.finishBuild(db, build.id, 'failed', output, isoNow(clock));
  const rev = rollRevision(ctx, agent, build.reason, build.id, null, null, 'failed');
  const keeps = agent.serving_revision ? ` (${agent.serving_revision} keeps serving)` : '';
  const message = buildMessage(agent.name, `revision ${rev.name} failed to build${keeps}: ${cause}`, output);
  agentStore.setRevisionState(db, agent.id, rev.name, 'failed', message);
  settleFailure(ctx, agent.id, message);
}

/** The revision answered its first request after deploying (unless a newer change overtook it). Own transaction. */
export function revisionServes(ctx: AreaContext, agentId: string, revision: string): void {
  const { db, clock } = ctx;
  tx(db, () => {
    const now = agentStore.byId(db, agentId);
    if (!now || now.latest_revision !== revision || now.state !== 'deploying') return;
    agentStore.setRevisionState(db, agentId, revision, 'ready', '');
    agentStore.update(db, agentId, { state: 'ready', message: '' }, isoNow(clock));
  });
}

/** The deploying step gave up on a revision: it is marked failed; an older one may keep serving. Own transaction. */
export function failRevision(ctx: AreaContext, agentId: string, revision: string | null, message: string, serving?: string | null): void {
  tx(ctx.db, () => {
    if (revision) agentStore.setRevisionState(ctx.db, agentId, revision, 'failed', message);
    const keeps = serving === undefined ? agentStore.byId(ctx.db, agentId)?.serving_revision : serving;
    settleFailure(ctx, agentId, keeps ? `${message}\n(${keeps} keeps serving)` : message, serving);
  });
}

/** A newer revision failed: the agent reads ready while an older revision serves, else failed. */
export function settleFailure(ctx: AreaContext, agentId: string, message: string, serving?: string | null): void {
  const { db, clock } = ctx;
  const now = agentStore.byId(db, agentId);
  if (!now) return;
  const keep = serving === undefined ? now.serving_revision : serving;
  agentStore.update(db, agentId, { state: keep ? 'ready' : 'failed', message, serving_revision: keep ?? null }, isoNow(clock));
}
