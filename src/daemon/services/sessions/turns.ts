import type { AgentSessionsHook, InvokeTurn } from '../../area.js';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { ApiError, conflict, unauthorized } from '../../http/errors.js';
import { HISTORY_TURNS_MAX } from '../../../api/sessions.js';
import { memorizeSession, memoryOffMessage, policyEnv, policyOf, relevantMemories } from './memory.js';
import { PolicyLookups } from './policy-lookups.js';
import { sessionStore } from './store.js';
import { TurnWriter } from './turn-writer.js';

/** What is kept of a response for the record; a larger answer is recorded without its events. */
const RECORD_BYTES = 1024 * 1024;

export const MEMORIZE_AUTH_MESSAGE = 'memorize requires a credential (writing to memory always does): send Authorization: Bearer <token>';

/**
 * The sessions area's side of an invoke (hooks.agentSessions): the earlier turns and relevant
 * memories travel with the request (`history`, `memories`, each only when not empty), and the
 * turn is recorded before the response ends, then memorized when the caller asked.
 */
/** Runs fn; a 503 (the secret store sealed or off, so turns cannot be sealed or opened) is logged and skipped. */
function unlessSealed<T>(ctx: AreaContext, what: string, fn: () => T): T | undefined {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 503) throw e;
    ctx.log.warn(`session ${what}: ${e.message}`);
    return undefined;
  }
}

export function agentSessionsHook(ctx: AreaContext): AgentSessionsHook {
  const writer = new TurnWriter(ctx.db);
  const policies = new PolicyLookups(ctx);
  const brief = (s: { id: string; turn_count: number; created_at: string; updated_at: string }) => ({ id: s.id, turn_count: s.turn_count, created_at: s.created_at, updated_at: s.updated_at });
  return {
    workloadEnv: (agentId) => policyEnv(policyOf(ctx, agentId)),
    userSessions: (agentId, userId, limit, offset) => sessionStore.list(ctx.db, agentId, userId, limit, offset).map(brief),
    userSession(agentId, id, userId) {
      const s = sessionStore.get(ctx.db, agentId, id);
      if (!s || s.user_id !== userId) return undefined;
      const turns = sessionStore.turns(ctx.db, agentId, id).map((t) => ({ index: t.idx, message: t.message, output: t.output, finished_at: t.finished_at }));
      return { session: brief(s), turns };
    },
    begin(agent, body, authenticated, newSession): InvokeTurn {
      const policy = policies.of(agent.id);
      if (body.memorize) {
        if (!authenticated) throw unauthorized(MEMORIZE_AUTH_MESSAGE);
        if (!policy.enabled) throw conflict(memoryOffMessage(agent.name));
      }
      // A session id the daemon just generated names no session yet: nothing to read.
      const owner = newSession ? undefined : sessionStore.owner(ctx.db, agent.id, body.session_id);
      if (owner !== undefined && owner !== body.user_id) throw conflict(`session ${body.session_id} belongs to another user: omit session_id for a new one`);
      const history = owner !== undefined ? (unlessSealed(ctx, 'history not read', () => sessionStore.recentTurns(ctx.db, agent.id, body.session_id, HISTORY_TURNS_MAX)) ?? []).map((t) => ({ message: t.message, output: t.output })) : [];
      const memories = relevantMemories(ctx, agent.id, body.user_id, body.message ?? '', policy);
      const startedAt = isoNow(ctx.clock);
      const chunks: Buffer[] = [];
      let size = 0;
      const record = async (status: number, out: { output: string; tool_calls: unknown[]; events: unknown[] }) => {
        if (status >= 400) return;
        // Turns are sealed at rest: with the secret store sealed the answer still goes out, unrecorded.
        // The answer waits for the commit: an acknowledged turn is on disk and the next turn reads it.
        await unlessSealed(ctx, 'turn not recorded', () => writer.append(agent.id, body.session_id, {
          user_id: body.user_id,
          message: body.message ?? '',
          output: out.output,
          tool_calls: JSON.stringify(out.tool_calls),
          events: JSON.stringify(out.events),
          status,
          started_at: startedAt,
          finished_at: isoNow(ctx.clock),
        }));
      };
      const after = async () => {
        if (!body.memorize) return;
        try {
          await memorizeSession(ctx, agent, body.session_id);
        } catch (e) {
          ctx.log.warn('memorize after invoke failed', { agent: agent.name, session: body.session_id, error: (e as Error).message });
        }
      };
      return {
        // The harness takes a present `history` (even empty) as the daemon owning the conversation;
        // a function's event gains the fields only when they hold something.
        context: { ...(history.length || agent.kind === 'agent' ? { history } : {}), ...(memories.length ? { memories } : {}) },
        tap(chunk) {
          size += chunk.length;
          if (size <= RECORD_BYTES) chunks.push(chunk);
        },
        async finishAgent(status, stream) {
          await record(status, size <= RECORD_BYTES ? parseAgentAnswer(Buffer.concat(chunks).toString('utf8'), stream) : { output: '', tool_calls: [], events: [] });
          await after();
        },
        async finishFunction(status, out) {
          const o = out && typeof out === 'object' && !Array.isArray(out) ? (out as Record<string, unknown>) : {};
          await record(status, {
            output: typeof o.output === 'string' ? o.output : JSON.stringify(out),
            tool_calls: Array.isArray(o.tool_calls) ? o.tool_calls : [],
            events: Array.isArray(o.events) ? o.events : [],
          });
          await after();
        },
      };
    },
  };
}

/** The harness's answer: one JSON object, or NDJSON events ending with a `done` line. */
function parseAgentAnswer(text: string, stream: boolean): { output: string; tool_calls: unknown[]; events: unknown[] } {
  try {
    if (!stream) {
      const o = JSON.parse(text) as { output?: unknown; tool_calls?: unknown; events?: unknown };
      return { output: typeof o.output === 'string' ? o.output : '', tool_calls: Array.isArray(o.tool_calls) ? o.tool_calls : [], events: Array.isArray(o.events) ? o.events : [] };
    }
    const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const done = lines.find((l) => l.type === 'done');
    return {
      output: typeof done?.output === 'string' ? done.output : '',
      tool_calls: Array.isArray(done?.tool_calls) ? done.tool_calls : [],
      events: lines.filter((l) => l.type !== 'done'),
    };
  } catch {
    return { output: '', tool_calls: [], events: [] };
  }
}
