import { openText, sealTexts } from '../../crypto/sealed.js';
import type { Db } from '../../store/db.js';
import { stmt } from '../../store/db.js';
import type { MemoryPolicy } from '../../../api/sessions.js';

export interface SessionRow {
  agent_id: string;
  id: string;
  user_id: string;
  cloned_from: string | null;
  created_at: string;
  updated_at: string;
  turn_count: number;
}

export interface TurnRow {
  idx: number;
  user_id: string;
  message: string;
  output: string;
  tool_calls: string;
  events: string;
  status: number;
  started_at: string;
  finished_at: string;
}

export interface MemoryRow {
  id: string;
  agent_id: string;
  user_id: string | null;
  fact: string;
  terms: string;
  source: 'generated' | 'manual';
  confirmed: number;
  invalidated: number;
  session_id: string | null;
  created_at: string;
  expires_at: string | null;
}

export interface PolicyRow {
  enabled: number;
  scope: 'user' | 'agent';
  retention_days: number | null;
  inject: number;
  exclude_sensitive: number;
  /** JSON list of strings */
  topics: string;
  instructions: string;
  knowledge_enabled: number;
  last_reindex_at: string | null;
  last_memorize_at: string | null;
}

export const DEFAULT_POLICY: MemoryPolicy = {
  enabled: false,
  scope: 'user',
  retention_days: null,
  inject: 5,
  exclude_sensitive: true,
  topics: [],
  instructions: '',
  knowledge_enabled: true,
};

const SESSION_COLS = 's.*, (SELECT COUNT(*) FROM sess_turns t WHERE t.agent_id = s.agent_id AND t.session_id = s.id) AS turn_count';

/**
 * A turn's contents are sealed at rest like secrets (AES-GCM under the daemon's key): a
 * conversation holds whatever the user and the workload said, keys and passwords included. The
 * row binding is the agent, so a cloned session's copied turns still open.
 */
const turnAad = (agentId: string) => `sess_turns:${agentId}`;

function openTurn(db: Db, agentId: string, r: TurnRow): TurnRow {
  const aad = turnAad(agentId);
  return { ...r, message: openText(db, r.message, aad), output: openText(db, r.output, aad), tool_calls: openText(db, r.tool_calls, aad), events: openText(db, r.events, aad) };
}

export const sessionStore = {
  /** Who a session belongs to, without counting its turns (the invoke path asks this on every turn). */
  owner(db: Db, agentId: string, id: string): string | undefined {
    return (stmt(db, 'SELECT user_id FROM sess_sessions WHERE agent_id = ? AND id = ?').get(agentId, id) as { user_id: string } | undefined)?.user_id;
  },
  get(db: Db, agentId: string, id: string): SessionRow | undefined {
    return stmt(db, `SELECT ${SESSION_COLS} FROM sess_sessions s WHERE s.agent_id = ? AND s.id = ?`).get(agentId, id) as SessionRow | undefined;
  },
  list(db: Db, agentId: string, userId: string | undefined, limit: number, offset: number): SessionRow[] {
    const where = userId === undefined ? '' : ' AND s.user_id = ?';
    const args: unknown[] = userId === undefined ? [agentId] : [agentId, userId];
    return stmt(db, `SELECT ${SESSION_COLS} FROM sess_sessions s WHERE s.agent_id = ?${where} ORDER BY s.updated_at DESC, s.created_at DESC, s.id LIMIT ? OFFSET ?`).all(...args, limit, offset) as SessionRow[];
  },
  /** The newest `max` turns, oldest first: what the next invoke hands to the framework. */
  recentTurns(db: Db, agentId: string, id: string, max: number): TurnRow[] {
    const rows = stmt(db, 'SELECT * FROM sess_turns WHERE agent_id = ? AND session_id = ? ORDER BY idx DESC LIMIT ?').all(agentId, id, max) as TurnRow[];
    return rows.reverse().map((r) => openTurn(db, agentId, r));
  },
  turns(db: Db, agentId: string, id: string): TurnRow[] {
    return (stmt(db, 'SELECT * FROM sess_turns WHERE agent_id = ? AND session_id = ? ORDER BY idx').all(agentId, id) as TurnRow[]).map((r) => openTurn(db, agentId, r));
  },
  /** Appends a turn, creating the session on its first one; the next index is computed in the same transaction. */
  append(db: Db, agentId: string, id: string, turn: Omit<TurnRow, 'idx'>): void {
    // Sealed before the transaction, with one look-up of the key: the write lock is held for the writes only.
    const sealed = sessionStore.seal(db, agentId, turn);
    db.transaction(() => sessionStore.write(db, agentId, id, sealed))();
  },
  /** A turn with its contents sealed, ready for write (throws the store's 503 while it is sealed). */
  seal(db: Db, agentId: string, turn: Omit<TurnRow, 'idx'>): Omit<TurnRow, 'idx'> {
    const [message, output, tool_calls, events] = sealTexts(db, [turn.message, turn.output, turn.tool_calls, turn.events], turnAad(agentId));
    return { ...turn, message: message!, output: output!, tool_calls: tool_calls!, events: events! };
  },
  /** Writes a sealed turn, creating the session on its first one; the caller holds the transaction. */
  write(db: Db, agentId: string, id: string, sealed: Omit<TurnRow, 'idx'>): void {
    stmt(db, 'INSERT INTO sess_sessions (agent_id, id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id, id) DO UPDATE SET updated_at = excluded.updated_at').run(
      agentId,
      id,
      sealed.user_id,
      sealed.started_at,
      sealed.finished_at,
    );
    // The next index is read by the insert itself: one statement instead of a query and an insert.
    stmt(
      db,
      `INSERT INTO sess_turns (agent_id, session_id, idx, user_id, message, output, tool_calls, events, status, started_at, finished_at)
       VALUES (?, ?, (SELECT COALESCE(MAX(idx), 0) + 1 FROM sess_turns WHERE agent_id = ? AND session_id = ?), ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(agentId, id, agentId, id, sealed.user_id, sealed.message, sealed.output, sealed.tool_calls, sealed.events, sealed.status, sealed.started_at, sealed.finished_at);
  },
  delete(db: Db, agentId: string, id: string): void {
    stmt(db, 'DELETE FROM sess_sessions WHERE agent_id = ? AND id = ?').run(agentId, id);
  },
  clone(db: Db, agentId: string, from: SessionRow, newId: string, now: string): void {
    db.transaction(() => {
      stmt(db, 'INSERT INTO sess_sessions (agent_id, id, user_id, cloned_from, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(agentId, newId, from.user_id, from.id, now, now);
      stmt(db, 'INSERT INTO sess_turns SELECT agent_id, ?, idx, user_id, message, output, tool_calls, events, status, started_at, finished_at FROM sess_turns WHERE agent_id = ? AND session_id = ?').run(newId, agentId, from.id);
    })();
  },
  rewind(db: Db, agentId: string, id: string, afterTurn: number, now: string): number {
    return db.transaction(() => {
      const n = stmt(db, 'DELETE FROM sess_turns WHERE agent_id = ? AND session_id = ? AND idx > ?').run(agentId, id, afterTurn).changes;
      stmt(db, 'UPDATE sess_sessions SET updated_at = ? WHERE agent_id = ? AND id = ?').run(now, agentId, id);
      return n;
    })();
  },
};

export const memoryStore = {
  policy(db: Db, agentId: string): PolicyRow | undefined {
    return stmt(db, 'SELECT * FROM sess_memory_policy WHERE agent_id = ?').get(agentId) as PolicyRow | undefined;
  },
  putPolicy(db: Db, agentId: string, p: MemoryPolicy): void {
    stmt(
      db,
      `INSERT INTO sess_memory_policy (agent_id, enabled, scope, retention_days, inject, exclude_sensitive, topics, instructions, knowledge_enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (agent_id) DO UPDATE SET enabled = excluded.enabled, scope = excluded.scope, retention_days = excluded.retention_days, inject = excluded.inject,
         exclude_sensitive = excluded.exclude_sensitive, topics = excluded.topics, instructions = excluded.instructions, knowledge_enabled = excluded.knowledge_enabled`,
    ).run(agentId, p.enabled ? 1 : 0, p.scope, p.retention_days, p.inject, p.exclude_sensitive ? 1 : 0, JSON.stringify(p.topics), p.instructions, p.knowledge_enabled ? 1 : 0);
  },
  mark(db: Db, agentId: string, column: 'last_reindex_at' | 'last_memorize_at', at: string): void {
    stmt(db, `UPDATE sess_memory_policy SET ${column} = ? WHERE agent_id = ?`).run(at, agentId);
  },
  insert(db: Db, row: MemoryRow): void {
    stmt(db, 'INSERT INTO sess_memories (id, agent_id, user_id, fact, terms, source, confirmed, invalidated, session_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
      row.id,
      row.agent_id,
      row.user_id,
      row.fact,
      row.terms,
      row.source,
      row.confirmed,
      row.invalidated,
      row.session_id,
      row.created_at,
      row.expires_at,
    );
  },
  get(db: Db, agentId: string, id: string): MemoryRow | undefined {
    return stmt(db, 'SELECT * FROM sess_memories WHERE agent_id = ? AND id = ?').get(agentId, id) as MemoryRow | undefined;
  },
  /** Every entry of the agent (optionally one user's), newest first. */
  all(db: Db, agentId: string, userId?: string): MemoryRow[] {
    if (userId === undefined) return stmt(db, 'SELECT * FROM sess_memories WHERE agent_id = ? ORDER BY created_at DESC, id').all(agentId) as MemoryRow[];
    return stmt(db, 'SELECT * FROM sess_memories WHERE agent_id = ? AND user_id = ? ORDER BY created_at DESC, id').all(agentId, userId) as MemoryRow[];
  },
  set(db: Db, agentId: string, id: string, column: 'confirmed' | 'invalidated'): void {
    stmt(db, `UPDATE sess_memories SET ${column} = 1 WHERE agent_id = ? AND id = ?`).run(agentId, id);
  },
  setTerms(db: Db, id: string, terms: string): void {
    stmt(db, 'UPDATE sess_memories SET terms = ? WHERE id = ?').run(terms, id);
  },
  delete(db: Db, agentId: string, id: string): void {
    stmt(db, 'DELETE FROM sess_memories WHERE agent_id = ? AND id = ?').run(agentId, id);
  },
  erase(db: Db, agentId: string, userId: string): number {
    return stmt(db, 'DELETE FROM sess_memories WHERE agent_id = ? AND user_id = ?').run(agentId, userId).changes;
  },
  dropExpired(db: Db, agentId: string, now: string): number {
    return stmt(db, 'DELETE FROM sess_memories WHERE agent_id = ? AND expires_at IS NOT NULL AND expires_at <= ?').run(agentId, now).changes;
  },
};
