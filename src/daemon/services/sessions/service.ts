import type { AreaContext } from '../../area.js';
import { MANAGEMENT_AUTH_REQUIRED, badRequest, notFound, unauthorized } from '../../http/errors.js';
import { isoNow } from '../../clock.js';
import { randomString } from '../../ids.js';
import { SESSION_ID_RE } from '../../../api/agents.js';
import type { MemoryPolicy, SessionView, SessionTurn } from '../../../api/sessions.js';
import type { PageQuery } from '../../../api/common.js';
import type { Principal } from '../auth/principal.js';
import { ownedAgent, resolveProject, unknownAgent } from '../agents/access.js';
import { stmt } from '../../store/db.js';
import { addMemory, memorizeSession, memoryStatus, memoryView, policyEnv, policyOf, rank, reindex } from './memory.js';
import { memoryStore, sessionStore, type SessionRow, type TurnRow } from './store.js';
import { MEMORIZE_AUTH_MESSAGE } from './turns.js';

/** The operations behind the sessions and memory routes: plain functions over the store and the context. */

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


export function listSessions(ctx: AreaContext, principal: Principal | undefined, name: string, query: PageQuery & { project?: string; user_id?: string }) {
  const { agent } = ownedAgent(ctx, need(principal), name, query.project);
  const page = ctx.pager.parse(query, `sessions:${agent.id}:${query.user_id ?? ''}`);
  const rows = sessionStore.list(ctx.db, agent.id, query.user_id, page.size + 1, page.offset);
  const { items, next_page_token } = ctx.pager.slice(page, rows);
  return { agent: agent.name, sessions: items.map((s) => sessionView(agent.name, s)), next_page_token: next_page_token ?? '' };
}

export function getSession(ctx: AreaContext, principal: Principal | undefined, name: string, id: string, project: string | undefined) {
  const { agent, session } = ownedSession(ctx, principal, name, id, project);
  return { session: sessionView(agent.name, session), turns: sessionStore.turns(ctx.db, agent.id, session.id).map(turnView) };
}

export function deleteSession(ctx: AreaContext, principal: Principal | undefined, name: string, id: string, project: string | undefined) {
  const { agent, session } = ownedSession(ctx, principal, name, id, project);
  sessionStore.delete(ctx.db, agent.id, session.id);
  return { session: sessionView(agent.name, session), deleted: true as const };
}

export function cloneSession(ctx: AreaContext, principal: Principal | undefined, name: string, id: string, project: string | undefined, newIdGiven: string | undefined) {
  const newId = newIdGiven ?? randomString(32);
  return ctx.db.transaction(() => {
    const { agent, session } = ownedSession(ctx, principal, name, id, project);
    if (sessionStore.get(ctx.db, agent.id, newId)) throw badRequest(`session ${newId} already exists: choose another new_id or omit it`);
    sessionStore.clone(ctx.db, agent.id, session, newId, isoNow(ctx.clock));
    return { session: sessionView(agent.name, sessionStore.get(ctx.db, agent.id, newId)!) };
  })();
}

export function rewindSession(ctx: AreaContext, principal: Principal | undefined, name: string, id: string, project: string | undefined, afterTurn: number) {
  return ctx.db.transaction(() => {
    const { agent, session } = ownedSession(ctx, principal, name, id, project);
    if (afterTurn > session.turn_count) throw badRequest(`after_turn ${afterTurn} is past the session's last turn (${session.turn_count})`);
    const dropped = sessionStore.rewind(ctx.db, agent.id, session.id, afterTurn, isoNow(ctx.clock));
    return { session: sessionView(agent.name, sessionStore.get(ctx.db, agent.id, session.id)!), dropped };
  })();
}

/**
 * Always authenticated (spec 1 §4.12, §5), whatever INVOKE_AUTH_REQUIRED says: a member of the
 * agent's project may commit a session, as an authenticated invoke with memorize may.
 */
export async function memorize(ctx: AreaContext, principal: Principal | undefined, name: string, id: string, project: string | undefined) {
  if (!principal) throw unauthorized(MEMORIZE_AUTH_MESSAGE);
  const p = resolveProject(ctx, principal, project).project;
  const agent = stmt(ctx.db, 'SELECT id, name FROM agents_agents WHERE project_id = ? AND name = ?').get(p.id, name) as { id: string; name: string } | undefined;
  if (!agent) throw unknownAgent(name);
  return await memorizeSession(ctx, agent, sessionId(id));
}

const ownedAgentOf = (ctx: AreaContext, p: Principal | undefined, name: string, project: string | undefined) => ownedAgent(ctx, need(p), name, project).agent;

function entry(ctx: AreaContext, agentId: string, id: string) {
  const m = memoryStore.get(ctx.db, agentId, id);
  if (!m) throw notFound(`unknown memory ${id}`);
  return m;
}

export function getPolicy(ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined) {
  const agent = ownedAgentOf(ctx, principal, name, project);
  return { agent: agent.name, policy: policyOf(ctx, agent.id) };
}

/**
 * Merges the given fields into the policy (a given `topics` replaces the list). The policy reaches
 * the workload as environment variables read at instance start, so a change stops the agent's
 * running instances, as an env change does: the next invoke starts one that sees it.
 */
export async function putPolicy(ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined, patch: Partial<MemoryPolicy>) {
  const agent = ownedAgentOf(ctx, principal, name, project);
  const before = policyOf(ctx, agent.id);
  const policy = { ...before, ...patch, ...(patch.topics ? { topics: distinct(patch.topics) } : {}) };
  memoryStore.putPolicy(ctx.db, agent.id, policy);
  if (JSON.stringify(policyEnv(before)) !== JSON.stringify(policyEnv(policy))) await ctx.hooks.recycleAgent?.(agent.id, 'memory policy changed');
  return { agent: agent.name, policy };
}

/** Topics once each, compared without case; the first spelling stays. */
function distinct(topics: string[]): string[] {
  const seen = new Set<string>();
  return topics.filter((t) => !seen.has(t.toLowerCase()) && seen.add(t.toLowerCase()));
}

export const getStatus = (ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined) => memoryStatus(ctx, ownedAgentOf(ctx, principal, name, project));

export function listMemories(ctx: AreaContext, principal: Principal | undefined, name: string, query: PageQuery & { project?: string; user_id?: string; query?: string; include_invalidated?: string }) {
  const agent = ownedAgentOf(ctx, principal, name, query.project);
  let rows = memoryStore.all(ctx.db, agent.id, query.user_id);
  if (query.include_invalidated !== 'true') rows = rows.filter((m) => m.invalidated === 0);
  if (query.query) rows = rank(rows, query.query);
  const page = ctx.pager.parse(query, `memory:${agent.id}:${query.user_id ?? ''}:${query.include_invalidated ?? ''}:${query.query ?? ''}`);
  const { items, next_page_token } = ctx.pager.slice(page, rows.slice(page.offset, page.offset + page.size + 1));
  return { agent: agent.name, memories: items.map(memoryView), next_page_token: next_page_token ?? '' };
}

export function addManualMemory(ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined, fact: string, userId: string | undefined) {
  const agent = ownedAgentOf(ctx, principal, name, project);
  return { memory: memoryView(addMemory(ctx, agent.id, fact.trim(), userId ?? null, 'manual', null)) };
}

export function eraseUser(ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined, userId: string) {
  const agent = ownedAgentOf(ctx, principal, name, project);
  return { agent: agent.name, user_id: userId, erased: memoryStore.erase(ctx.db, agent.id, userId) };
}

export function deleteMemory(ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined, id: string) {
  const agent = ownedAgentOf(ctx, principal, name, project);
  const m = entry(ctx, agent.id, id);
  memoryStore.delete(ctx.db, agent.id, m.id);
  return { memory: memoryView(m), deleted: true as const };
}

export function markMemory(ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined, id: string, column: 'confirmed' | 'invalidated') {
  const agent = ownedAgentOf(ctx, principal, name, project);
  memoryStore.set(ctx.db, agent.id, entry(ctx, agent.id, id).id, column);
  return { memory: memoryView(entry(ctx, agent.id, id)) };
}

export const reindexMemory = (ctx: AreaContext, principal: Principal | undefined, name: string, project: string | undefined) => reindex(ctx, ownedAgentOf(ctx, principal, name, project));
