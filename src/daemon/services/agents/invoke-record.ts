import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AreaContext } from '../../area.js';
import type { AgentRow } from './store.js';

/** The ids invoke read from the body, kept per response so the observer can record them. */
const ids = new WeakMap<ServerResponse, { userId: string; sessionId: string }>();

export function rememberInvokeIds(res: ServerResponse, body: { user_id: string; session_id: string }): void {
  ids.set(res, { userId: body.user_id, sessionId: body.session_id });
}

/**
 * Tells hooks.invokeObservers about an invoke when its response is over (finished or cut), with
 * the status sent and the time from routing to the end: what the metrics and users routes read.
 */
export function observeInvoke(ctx: AreaContext, agent: AgentRow, res: ServerResponse): void {
  if (!ctx.hooks.invokeObservers.length) return;
  const started = performance.now();
  res.once('close', () => {
    const who = ids.get(res);
    recordInvoke(ctx, agent, res.statusCode, performance.now() - started, who);
  });
}

/** Tells every invoke observer about one invoke that is over; an observer's failure is only logged. */
export function recordInvoke(ctx: AreaContext, agent: AgentRow, status: number, ms: number, who?: { userId: string; sessionId: string }): void {
  const e = { projectId: agent.project_id, agentId: agent.id, status, ms, userId: who?.userId, sessionId: who?.sessionId };
  for (const o of ctx.hooks.invokeObservers) {
    try {
      o(e);
    } catch (err) {
      ctx.log.warn('invoke observer failed', { error: (err as Error).message });
    }
  }
}
