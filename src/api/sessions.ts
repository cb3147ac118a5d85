import { z } from 'zod';
import { KiB, route } from './contract.js';
import { PageQuery, Timestamp } from './common.js';
import { SESSION_ID_RE, USER_ID_RE } from './agents.js';
import { lazySchema } from './lazy.js';

/**
 * Sessions and memory of an agent (spec 1 §4.12: routes whose bodies are not shown). The shapes
 * follow what users of LangGraph threads and store, Google ADK's session and memory services and
 * Vertex AI Agent Engine's memory bank expect: a session is a thread of turns (ADK events with
 * state; LangGraph checkpoints), a memory is a fact with a scope (the memory bank's
 * `scope: {user_id}`) that is generated from a session or added by hand, and can be confirmed or
 * invalidated. See docs/decisions/sessions.md.
 */

export const SessionId = lazySchema(() => z.string().regex(SESSION_ID_RE, 'must match ^[A-Za-z0-9_.-]{1,128}$'));
export const UserId = lazySchema(() => z.string().regex(USER_ID_RE, 'must match ^[A-Za-z0-9_.:@-]{1,128}$'));

const ProjectQuery = lazySchema(() => z.object({ project: z.string().optional() }));
const NameParams = lazySchema(() => z.object({ name: z.string() }));
const SessionParams = lazySchema(() => NameParams.extend({ id: z.string() }));
const MemoryParams = lazySchema(() => NameParams.extend({ id: z.string() }));

/** At most this many earlier turns travel to the framework per invoke (newest kept). */
export const HISTORY_TURNS_MAX = 200;
/** Characters of each recorded output and message kept per turn (the turn is still whole in events). */
export const FACT_CHARS_MAX = 2000;

export const ToolCallSummary = lazySchema(() => z.object({ name: z.string().nullable(), summary: z.string() }));

/** One turn: the ADK event pair (user content, model content) or a LangGraph checkpoint step. */
export const SessionTurn = lazySchema(() => z.object({
  index: z.number().int().describe('1-based position in the session'),
  message: z.string().describe('what the user said'),
  output: z.string().describe('what the agent answered (a function: its JSON as text)'),
  tool_calls: z.array(ToolCallSummary),
  events: z.array(z.record(z.string(), z.unknown())).describe('the harness events of the turn'),
  user_id: z.string(),
  status: z.number().int().describe('HTTP status the turn answered with'),
  started_at: Timestamp,
  finished_at: Timestamp,
}));
export type SessionTurn = z.infer<typeof SessionTurn>;

export const SessionView = lazySchema(() => z.object({
  id: z.string(),
  agent: z.string(),
  user_id: z.string().describe('the end user the session belongs to'),
  turn_count: z.number().int(),
  cloned_from: z.string().optional(),
  created_at: Timestamp,
  updated_at: Timestamp,
}));
export type SessionView = z.infer<typeof SessionView>;

export const MEMORY_SCOPES = ['user', 'agent'] as const;

export const MEMORY_POLICY_LIMITS = { topics: 20, topicChars: 80, instructionsChars: 2000 } as const;

/**
 * Off by default (spec 1 §4.12); `scope` picks whose memories an invoke sees. The last four fields
 * shape what memorize keeps (Vertex memory bank: topics and custom instructions) and whether the
 * harness offers search_knowledge; the workload reads every field as the MEMORY_* and
 * KNOWLEDGE_ENABLED variables (docs/decisions/sessions.md).
 */
export const MemoryPolicy = lazySchema(() => z.strictObject({
  enabled: z.boolean(),
  scope: z.enum(MEMORY_SCOPES).describe('user: each end user sees their own; agent: every user sees all'),
  retention_days: z.number().int().min(1).max(3650).nullable().describe('entries expire this long after creation; null keeps them'),
  inject: z.number().int().min(0).max(50).describe('at most this many relevant memories are put into the context per invoke'),
  exclude_sensitive: z.boolean().describe('memorize drops facts that look like credentials, card numbers or email addresses'),
  topics: z
    .array(z.string().trim().min(1).max(MEMORY_POLICY_LIMITS.topicChars))
    .max(MEMORY_POLICY_LIMITS.topics)
    .describe('when not empty, memorize keeps only facts about these topics (the model is told them; the deterministic extractor matches words)'),
  instructions: z.string().max(MEMORY_POLICY_LIMITS.instructionsChars).describe("appended to the model's extraction prompt"),
  knowledge_enabled: z.boolean().describe('whether the harness offers the search_knowledge tool'),
}));
export type MemoryPolicy = z.infer<typeof MemoryPolicy>;
export const MemoryPolicyPatch = lazySchema(() => MemoryPolicy.partial());

export const MEMORY_SOURCES = ['generated', 'manual'] as const;

/** A memory-bank entry (Vertex: fact + scope; LangGraph store: namespace + value). */
export const MemoryEntry = lazySchema(() => z.object({
  id: z.string(),
  fact: z.string(),
  user_id: z.string().nullable().describe('scope: the end user, or null for an agent-wide memory'),
  source: z.enum(MEMORY_SOURCES),
  confirmed: z.boolean().describe('a generated memory a person confirmed; manual ones are confirmed'),
  invalidated: z.boolean().describe('kept but no longer served to the agent'),
  session_id: z.string().nullable().describe('the session it was generated from'),
  created_at: Timestamp,
  expires_at: Timestamp.nullable(),
}));
export type MemoryEntry = z.infer<typeof MemoryEntry>;

export const MemoryStatus = lazySchema(() => z.object({
  agent: z.string(),
  policy: MemoryPolicy,
  entries: z.object({ total: z.number().int(), served: z.number().int(), invalidated: z.number().int(), expired: z.number().int(), generated: z.number().int(), confirmed: z.number().int(), manual: z.number().int() }),
  last_reindex_at: Timestamp.nullable(),
  last_memorize_at: Timestamp.nullable(),
  extractor: z.enum(['model', 'deterministic']).describe('what memorize uses now: the platform model when one is configured'),
}));

export const MemorizeResult = lazySchema(() => z.object({
  agent: z.string(),
  session_id: z.string(),
  extractor: z.enum(['model', 'deterministic']),
  created: z.array(MemoryEntry),
  skipped_duplicates: z.number().int(),
  skipped_sensitive: z.number().int().describe('facts dropped by exclude_sensitive'),
  skipped_off_topic: z.number().int().describe("facts the deterministic extractor found about none of the policy's topics"),
}));
export type MemorizeResult = z.infer<typeof MemorizeResult>;

const SessionListQuery = lazySchema(() => PageQuery.extend({ project: z.string().optional(), user_id: UserId.optional() }));
const MemoryListQuery = lazySchema(() => PageQuery.extend({
  project: z.string().optional(),
  user_id: UserId.optional(),
  query: z.string().max(1000).optional().describe('ranks by relevance to this text instead of newest first'),
  include_invalidated: z.enum(['true', 'false']).optional(),
}));

export const sessionRoutes = {
  list: route({
    id: 'sessions.list',
    method: 'GET',
    path: '/v1/agents/{name}/sessions',
    summary: "An agent's sessions, newest first (?user_id= narrows to one end user)",
    auth: 'any',
    params: NameParams,
    query: SessionListQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), sessions: z.array(SessionView), next_page_token: z.string() })),
  }),
  get: route({
    id: 'sessions.get',
    method: 'GET',
    path: '/v1/agents/{name}/sessions/{id}',
    summary: 'One session with its turns, oldest first',
    auth: 'any',
    params: SessionParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ session: SessionView, turns: z.array(SessionTurn) })),
  }),
  delete: route({
    id: 'sessions.delete',
    method: 'DELETE',
    path: '/v1/agents/{name}/sessions/{id}',
    summary: 'Delete a session and its turns (its memories stay)',
    auth: 'any',
    params: SessionParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ session: SessionView, deleted: z.literal(true) })),
  }),
  clone: route({
    id: 'sessions.clone',
    method: 'POST',
    path: '/v1/agents/{name}/sessions/{id}:clone',
    summary: 'A new session with the same turns (LangGraph: copy a thread; ADK: fork a session)',
    auth: 'any',
    params: SessionParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({ new_id: SessionId.optional().describe('generated when omitted') })),
    status: 201,
    response: lazySchema(() => z.object({ session: SessionView })),
  }),
  rewind: route({
    id: 'sessions.rewind',
    method: 'POST',
    path: '/v1/agents/{name}/sessions/{id}:rewind',
    summary: 'Drop the turns after a given one (LangGraph: resume from a checkpoint; ADK: rewind)',
    auth: 'any',
    params: SessionParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({ after_turn: z.number().int().min(0).describe('turns with a greater index are dropped; 0 empties the session') })),
    status: 200,
    response: lazySchema(() => z.object({ session: SessionView, dropped: z.number().int() })),
  }),
  memorize: route({
    id: 'sessions.memorize',
    method: 'POST',
    path: '/v1/agents/{name}/sessions/{id}/memorize',
    summary: "Commit a session's facts to memory (always authenticated; 409 when memory is off)",
    auth: 'any',
    params: SessionParams,
    query: ProjectQuery,
    status: 200,
    response: MemorizeResult,
  }),
};

export const memoryRoutes = {
  policyGet: route({
    id: 'memory.policy.get',
    method: 'GET',
    path: '/v1/agents/{name}/memory/policy',
    summary: 'Memory policy (off by default)',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), policy: MemoryPolicy })),
  }),
  policyPut: route({
    id: 'memory.policy.put',
    method: 'PUT',
    path: '/v1/agents/{name}/memory/policy',
    summary: 'Set the memory policy (fields left out keep their value)',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: MemoryPolicyPatch,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), policy: MemoryPolicy })),
  }),
  status: route({
    id: 'memory.status',
    method: 'GET',
    path: '/v1/agents/{name}/memory/status',
    summary: 'Memory counts, last reindex and memorize',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: MemoryStatus,
  }),
  list: route({
    id: 'memory.list',
    method: 'GET',
    path: '/v1/agents/{name}/memory',
    summary: 'Memory entries, newest first, or ranked by ?query=',
    auth: 'any',
    params: NameParams,
    query: MemoryListQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), memories: z.array(MemoryEntry), next_page_token: z.string() })),
  }),
  add: route({
    id: 'memory.add',
    method: 'POST',
    path: '/v1/agents/{name}/memory',
    summary: 'Add a memory by hand (confirmed)',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({ fact: z.string().min(1).max(FACT_CHARS_MAX), user_id: UserId.optional().describe('omit for an agent-wide memory') })),
    bodyLimit: 16 * KiB,
    status: 201,
    response: lazySchema(() => z.object({ memory: MemoryEntry })),
  }),
  erase: route({
    id: 'memory.erase',
    method: 'DELETE',
    path: '/v1/agents/{name}/memory',
    summary: "Erase every memory of one end user (?user_id= is required)",
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => ProjectQuery.extend({ user_id: UserId })),
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), user_id: z.string(), erased: z.number().int() })),
  }),
  delete: route({
    id: 'memory.delete',
    method: 'DELETE',
    path: '/v1/agents/{name}/memory/{id}',
    summary: 'Delete one memory',
    auth: 'any',
    params: MemoryParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ memory: MemoryEntry, deleted: z.literal(true) })),
  }),
  invalidate: route({
    id: 'memory.invalidate',
    method: 'POST',
    path: '/v1/agents/{name}/memory/{id}:invalidate',
    summary: 'Keep a memory but stop serving it',
    auth: 'any',
    params: MemoryParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ memory: MemoryEntry })),
  }),
  confirm: route({
    id: 'memory.confirm',
    method: 'POST',
    path: '/v1/agents/{name}/memory/{id}:confirm',
    summary: 'Mark a generated memory as confirmed',
    auth: 'any',
    params: MemoryParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ memory: MemoryEntry })),
  }),
  reindex: route({
    id: 'memory.reindex',
    method: 'POST',
    path: '/v1/agents/{name}/memory:reindex',
    summary: 'Recompute the search terms of every memory and drop expired ones',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: MemoryStatus,
  }),
};
