import type { Area, AreaContext } from '../../area.js';
import { MANAGEMENT_AUTH_REQUIRED, badRequest, notFound, unauthorized } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { isoNow } from '../../clock.js';
import { randomString } from '../../ids.js';
import { SESSION_ID_RE } from '../../../api/agents.js';
import { memoryRoutes, sessionRoutes, type SessionView, type SessionTurn } from '../../../api/sessions.js';
import type { Principal } from '../auth/principal.js';
import { ownedAgent, resolveProject, unknownAgent } from '../agents/access.js';
import { addMemory, memorizeSession, memoryStatus, memoryView, policyOf, rank, reindex } from './memory.js';
import { sessionMigrations } from './migrations.js';
import { memoryStore, sessionStore, type SessionRow, type TurnRow } from './store.js';
import { agentSessionsHook, MEMORIZE_AUTH_MESSAGE } from './turns.js';
import { stmt } from '../../store/db.js';

/**
 * Sessions and memory of agents (spec 1 §4.12): every invoke's turn is kept per session, the
 * next invoke of the session sees the earlier ones, and memory turns sessions into facts served
 * back at invoke time. Management routes take the agents' owner gate (404 to outsiders).
 */
export const sessionsArea: Area = {
  name: 'sessions',
  migrations: sessionMigrations,
  register(r, ctx) {
    ctx.hooks.agentSessions = agentSessionsHook(ctx);
    registerSessionRoutes(r, ctx);
    registerMemoryRoutes(r, ctx);
  },
};

const need = (p: Principal | undefined): Principal => {
  if (!p) throw unauthorized(MANAGEMENT_AUTH_REQUIRED);
  return p;
};

function sessionId(id: string): string {
  if (!SESSION_ID_RE.test(id)) throw badRequest('invalid session id: must match ^[A-Za-z0-9_.-]{1,128}$');
  return id;
}

function sessionView(agent: string, s: SessionRow): SessionView {
  return { id: s.id, agent, user_id: s.user_id, turn_count: s.turn_count, ...(s.cloned_from ? { cloned_from: s.cloned_from } : {}), created_at: s.created_at, updated_at: s.updated_at };
}

function turnView(t: TurnRow): SessionTurn {
  return {
    index: t.idx,
    message: t.message,
    output: t.output,
    tool_calls: JSON.parse(t.tool_calls) as SessionTurn['tool_calls'],
    events: JSON.parse(t.events) as SessionTurn['events'],
    user_id: t.user_id,
    status: t.status,
    started_at: t.started_at,
    finished_at: t.finished_at,
  };
}

function ownedSession(ctx: AreaContext, principal: Principal | undefined, name: string, id: string, project: string | undefined) {
  const { agent } = ownedAgent(ctx, need(principal), name, project);
  const s = sessionStore.get(ctx.db, agent.id, sessionId(id));
  if (!s) throw notFound(`unknown session ${id}`);
  return { agent, session: s };
}

function registerSessionRoutes(r: Router, ctx: AreaContext): void {
  r.handle(sessionRoutes.list, ({ principal, params, query }) => {
    const { agent } = ownedAgent(ctx, need(principal), params.name, query.project);
    const page = ctx.pager.parse(query, `sessions:${agent.id}:${query.user_id ?? ''}`);
    const rows = sessionStore.list(ctx.db, agent.id, query.user_id, page.size + 1, page.offset);
    const { items, next_page_token } = ctx.pager.slice(page, rows);
    return { agent: agent.name, sessions: items.map((s) => sessionView(agent.name, s)), next_page_token: next_page_token ?? '' };
  });
  r.handle(sessionRoutes.get, ({ principal, params, query }) => {
    const { agent, session } = ownedSession(ctx, principal, params.name, params.id, query.project);
    return { session: sessionView(agent.name, session), turns: sessionStore.turns(ctx.db, agent.id, session.id).map(turnView) };
  });
  r.handle(sessionRoutes.delete, ({ principal, params, query }) => {
    const { agent, session } = ownedSession(ctx, principal, params.name, params.id, query.project);
    sessionStore.delete(ctx.db, agent.id, session.id);
    return { session: sessionView(agent.name, session), deleted: true as const };
  });
  r.handle(sessionRoutes.clone, ({ principal, params, query, body }) => {
    const { agent, session } = ownedSession(ctx, principal, params.name, params.id, query.project);
    const newId = body.new_id ?? randomString(32);
    if (sessionStore.get(ctx.db, agent.id, newId)) throw badRequest(`session ${newId} already exists: choose another new_id or omit it`);
    sessionStore.clone(ctx.db, agent.id, session, newId, isoNow(ctx.clock));
    return { session: sessionView(agent.name, sessionStore.get(ctx.db, agent.id, newId)!) };
  });
  r.handle(sessionRoutes.rewind, ({ principal, params, query, body }) => {
    const { agent, session } = ownedSession(ctx, principal, params.name, params.id, query.project);
    if (body.after_turn > session.turn_count) throw badRequest(`after_turn ${body.after_turn} is past the session's last turn (${session.turn_count})`);
    const dropped = sessionStore.rewind(ctx.db, agent.id, session.id, body.after_turn, isoNow(ctx.clock));
    return { session: sessionView(agent.name, sessionStore.get(ctx.db, agent.id, session.id)!), dropped };
  });
  // Always authenticated (spec 1 §4.12, §5), whatever INVOKE_AUTH_REQUIRED says: a member of the
  // agent's project may commit a session, as an authenticated invoke with memorize may.
  r.handle(sessionRoutes.memorize, async ({ principal, params, query }) => {
    if (!principal) throw unauthorized(MEMORIZE_AUTH_MESSAGE);
    const project = resolveProject(ctx, principal, query.project).project;
    const agent = stmt(ctx.db, 'SELECT id, name FROM agents_agents WHERE project_id = ? AND name = ?').get(project.id, params.name) as { id: string; name: string } | undefined;
    if (!agent) throw unknownAgent(params.name);
    return await memorizeSession(ctx, agent, sessionId(params.id));
  });
}

function registerMemoryRoutes(r: Router, ctx: AreaContext): void {
  const owned = (p: Principal | undefined, name: string, project: string | undefined) => ownedAgent(ctx, need(p), name, project).agent;
  const entry = (agentId: string, id: string) => {
    const m = memoryStore.get(ctx.db, agentId, id);
    if (!m) throw notFound(`unknown memory ${id}`);
    return m;
  };
  r.handle(memoryRoutes.policyGet, ({ principal, params, query }) => {
    const agent = owned(principal, params.name, query.project);
    return { agent: agent.name, policy: policyOf(ctx, agent.id) };
  });
  r.handle(memoryRoutes.policyPut, ({ principal, params, query, body }) => {
    const agent = owned(principal, params.name, query.project);
    const policy = { ...policyOf(ctx, agent.id), ...body };
    memoryStore.putPolicy(ctx.db, agent.id, policy);
    return { agent: agent.name, policy };
  });
  r.handle(memoryRoutes.status, ({ principal, params, query }) => memoryStatus(ctx, owned(principal, params.name, query.project)));
  r.handle(memoryRoutes.list, ({ principal, params, query }) => {
    const agent = owned(principal, params.name, query.project);
    let rows = memoryStore.all(ctx.db, agent.id, query.user_id);
    if (query.include_invalidated !== 'true') rows = rows.filter((m) => m.invalidated === 0);
    if (query.query) rows = rank(rows, query.query);
    const page = ctx.pager.parse(query, `memory:${agent.id}:${query.user_id ?? ''}:${query.include_invalidated ?? ''}:${query.query ?? ''}`);
    const { items, next_page_token } = ctx.pager.slice(page, rows.slice(page.offset, page.offset + page.size + 1));
    return { agent: agent.name, memories: items.map(memoryView), next_page_token: next_page_token ?? '' };
  });
  r.handle(memoryRoutes.add, ({ principal, params, query, body }) => {
    const agent = owned(principal, params.name, query.project);
    return { memory: memoryView(addMemory(ctx, agent.id, body.fact.trim(), body.user_id ?? null, 'manual', null)) };
  });
  r.handle(memoryRoutes.erase, ({ principal, params, query }) => {
    const agent = owned(principal, params.name, query.project);
    return { agent: agent.name, user_id: query.user_id, erased: memoryStore.erase(ctx.db, agent.id, query.user_id) };
  });
  r.handle(memoryRoutes.delete, ({ principal, params, query }) => {
    const agent = owned(principal, params.name, query.project);
    const m = entry(agent.id, params.id);
    memoryStore.delete(ctx.db, agent.id, m.id);
    return { memory: memoryView(m), deleted: true as const };
  });
  for (const [contract, column] of [
    [memoryRoutes.invalidate, 'invalidated'],
    [memoryRoutes.confirm, 'confirmed'],
  ] as const) {
    r.handle(contract, ({ principal, params, query }) => {
      const agent = owned(principal, params.name, query.project);
      memoryStore.set(ctx.db, agent.id, entry(agent.id, params.id).id, column);
      return { memory: memoryView(entry(agent.id, params.id)) };
    });
  }
  r.handle(memoryRoutes.reindex, ({ principal, params, query }) => reindex(ctx, owned(principal, params.name, query.project)));
}
