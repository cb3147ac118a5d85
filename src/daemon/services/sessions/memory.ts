import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { ApiError, conflict, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { stmt } from '../../store/db.js';
import type { MemoryEntry, MemoryPolicy, MemorizeResult } from '../../../api/sessions.js';
import { looksSensitive } from '../../secret-looking.js';
import { aboutTopics, deterministicFacts, factKey, modelFacts, terms, type ModelEndpoint } from './extractor.js';
import { DEFAULT_POLICY, memoryStore, sessionStore, type MemoryRow } from './store.js';

export function policyOf(ctx: AreaContext, agentId: string): MemoryPolicy {
  const p = memoryStore.policy(ctx.db, agentId);
  if (!p) return { ...DEFAULT_POLICY, topics: [] };
  return {
    enabled: p.enabled === 1,
    scope: p.scope,
    retention_days: p.retention_days,
    inject: p.inject,
    exclude_sensitive: p.exclude_sensitive === 1,
    topics: JSON.parse(p.topics) as string[],
    instructions: p.instructions,
    knowledge_enabled: p.knowledge_enabled === 1,
  };
}

/**
 * The policy as the workload reads it (spec 1 §4.12 refuses these names as user env: the policy
 * route sets them). MEMORY_TOPICS is a JSON list, so a topic may hold a comma.
 */
export function policyEnv(p: MemoryPolicy): Record<string, string> {
  return {
    MEMORY_MODE: p.enabled ? p.scope : 'off',
    MEMORY_INJECT: String(p.inject),
    MEMORY_TTL_SECONDS: p.retention_days ? String(p.retention_days * 86_400) : '',
    MEMORY_EXCLUDE_SENSITIVE: String(p.exclude_sensitive),
    MEMORY_TOPICS: JSON.stringify(p.topics),
    MEMORY_INSTRUCTIONS: p.instructions,
    KNOWLEDGE_ENABLED: String(p.knowledge_enabled),
  };
}

export const memoryOffMessage = (name: string) =>
  `memory is off for agent ${name}: turn it on with PUT /v1/agents/${name}/memory/policy {"enabled": true} (platform memory policy ${name} --enable)`;

export function memoryView(r: MemoryRow): MemoryEntry {
  return {
    id: r.id,
    fact: r.fact,
    user_id: r.user_id,
    source: r.source,
    confirmed: r.confirmed === 1,
    invalidated: r.invalidated === 1,
    session_id: r.session_id,
    created_at: r.created_at,
    expires_at: r.expires_at,
  };
}

const served = (r: MemoryRow, now: string) => r.invalidated === 0 && (r.expires_at === null || r.expires_at > now);

/**
 * The model memorize asks: the agent's MODEL_BASE_URL and CHAT_MODEL env overrides (spec 1
 * §4.12 allows them) over the platform defaults; none configured means the deterministic
 * extractor (docs/decisions/sessions.md). The key is the platform's.
 */
export function modelEndpoint(ctx: AreaContext, agentId: string): ModelEndpoint | undefined {
  const m = ctx.config.workloads.model;
  const env = Object.fromEntries(
    (stmt(ctx.db, "SELECT key, value FROM agents_env WHERE agent_id = ? AND key IN ('MODEL_BASE_URL', 'CHAT_MODEL')").all(agentId) as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]),
  );
  const baseUrl = env.MODEL_BASE_URL || m.baseUrl;
  const model = env.CHAT_MODEL || m.chatModel;
  return baseUrl && model ? { baseUrl, model, apiKey: m.apiKey } : undefined;
}

/**
 * Ranks a set of entries against a text: shared terms first (more shared, higher), then newest.
 * Entries sharing nothing stay in, after the others, so a short policy still serves recent facts.
 */
export function rank(rows: MemoryRow[], text: string): MemoryRow[] {
  const want = new Set(terms(text));
  const score = (r: MemoryRow) => r.terms.split(' ').filter((t) => want.has(t)).length;
  return rows
    .map((r, i) => ({ r, s: score(r), i }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.r);
}

/** The memories an invoke puts into the framework's context: served, in scope, most relevant first. */
export function relevantMemories(ctx: AreaContext, agentId: string, userId: string, message: string, policy = policyOf(ctx, agentId)): string[] {
  if (!policy.enabled || policy.inject === 0) return [];
  const now = isoNow(ctx.clock);
  const rows = memoryStore.all(ctx.db, agentId, policy.scope === 'user' ? userId : undefined).filter((r) => served(r, now));
  return rank(rows, message)
    .slice(0, policy.inject)
    .map((r) => r.fact);
}

export function addMemory(ctx: AreaContext, agentId: string, fact: string, userId: string | null, source: 'generated' | 'manual', sessionId: string | null): MemoryRow {
  const policy = policyOf(ctx, agentId);
  const now = ctx.clock.now();
  const row: MemoryRow = {
    id: `mem_${newId().replace(/-/g, '')}`,
    agent_id: agentId,
    user_id: userId,
    fact,
    terms: terms(fact).join(' '),
    source,
    confirmed: source === 'manual' ? 1 : 0,
    invalidated: 0,
    session_id: sessionId,
    created_at: new Date(now).toISOString(),
    expires_at: policy.retention_days ? new Date(now + policy.retention_days * 86_400_000).toISOString() : null,
  };
  memoryStore.insert(ctx.db, row);
  return row;
}

/**
 * Commits a session's facts (spec 1 §4.12 memorize): 409 when memory is off. Facts already held
 * in the same scope (served or not: an invalidated fact is not regenerated) are skipped.
 */
export async function memorizeSession(ctx: AreaContext, agent: { id: string; name: string }, sessionId: string): Promise<MemorizeResult> {
  const policy = policyOf(ctx, agent.id);
  if (!policy.enabled) throw conflict(memoryOffMessage(agent.name));
  const session = sessionStore.get(ctx.db, agent.id, sessionId);
  if (!session) throw notFound(`unknown session ${sessionId}`);
  const turns = sessionStore.turns(ctx.db, agent.id, sessionId);
  const endpoint = modelEndpoint(ctx, agent.id);
  let found: string[];
  try {
    found = endpoint ? await modelFacts(endpoint, turns, policy) : deterministicFacts(turns);
  } catch (e) {
    throw new ApiError(502, `memorize could not ask the model at ${endpoint!.baseUrl}: ${(e as Error).message}`.slice(0, 1000));
  }
  // The model was told the rules; its answer is still checked, since a model may not comply.
  // Topics filter the deterministic extractor only: the model judges a topic better than words do.
  const sensitive = policy.exclude_sensitive ? found.filter(looksSensitive) : [];
  const kept = found.filter((f) => !sensitive.includes(f));
  const facts = endpoint ? kept : kept.filter((f) => aboutTopics(f, policy.topics));
  const userId = policy.scope === 'user' ? session.user_id : null;
  const held = new Set(memoryStore.all(ctx.db, agent.id, userId ?? undefined).filter((r) => r.user_id === userId).map((r) => factKey(r.fact)));
  const created: MemoryEntry[] = [];
  let skipped = 0;
  for (const f of facts) {
    if (held.has(factKey(f))) {
      skipped++;
      continue;
    }
    held.add(factKey(f));
    created.push(memoryView(addMemory(ctx, agent.id, f, userId, 'generated', sessionId)));
  }
  if (!memoryStore.policy(ctx.db, agent.id)) memoryStore.putPolicy(ctx.db, agent.id, policy);
  memoryStore.mark(ctx.db, agent.id, 'last_memorize_at', isoNow(ctx.clock));
  return {
    agent: agent.name,
    session_id: sessionId,
    extractor: endpoint ? 'model' : 'deterministic',
    created,
    skipped_duplicates: skipped,
    skipped_sensitive: sensitive.length,
    skipped_off_topic: kept.length - facts.length,
  };
}

export function memoryStatus(ctx: AreaContext, agent: { id: string; name: string }) {
  const policy = policyOf(ctx, agent.id);
  const row = memoryStore.policy(ctx.db, agent.id);
  const now = isoNow(ctx.clock);
  const all = memoryStore.all(ctx.db, agent.id);
  const count = (f: (r: MemoryRow) => boolean) => all.filter(f).length;
  return {
    agent: agent.name,
    policy,
    entries: {
      total: all.length,
      served: count((r) => served(r, now)),
      invalidated: count((r) => r.invalidated === 1),
      expired: count((r) => r.expires_at !== null && r.expires_at <= now),
      generated: count((r) => r.source === 'generated'),
      confirmed: count((r) => r.confirmed === 1),
      manual: count((r) => r.source === 'manual'),
    },
    last_reindex_at: row?.last_reindex_at ?? null,
    last_memorize_at: row?.last_memorize_at ?? null,
    extractor: modelEndpoint(ctx, agent.id) ? ('model' as const) : ('deterministic' as const),
  };
}

/** Recomputes every entry's terms (after a change of the term rules) and drops expired entries. */
export function reindex(ctx: AreaContext, agent: { id: string; name: string }) {
  const now = isoNow(ctx.clock);
  ctx.db.transaction(() => {
    memoryStore.dropExpired(ctx.db, agent.id, now);
    for (const r of memoryStore.all(ctx.db, agent.id)) memoryStore.setTerms(ctx.db, r.id, terms(r.fact).join(' '));
    if (!memoryStore.policy(ctx.db, agent.id)) memoryStore.putPolicy(ctx.db, agent.id, policyOf(ctx, agent.id));
    memoryStore.mark(ctx.db, agent.id, 'last_reindex_at', now);
  })();
  return memoryStatus(ctx, agent);
}
