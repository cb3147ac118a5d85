import { ACTIVITY_RETENTION_SECONDS, agentActivityRoutes, METRICS_WINDOW_DEFAULT_SECONDS } from '../../../api/agent-activity.js';
import type { Area, AreaContext, InvokeRecord } from '../../area.js';
import { badRequest, notFound } from '../../http/errors.js';
import { stmt, tx } from '../../store/db.js';

/** Prune old records on every this-many inserts (cheap, and no timer to stop). */
const PRUNE_EVERY = 500;
/**
 * Invokes are written in one transaction at most this long after they end, not one commit per
 * invoke on the invoke path (docs/decisions/speed-daemon.md); reads of the table write them first.
 */
const WRITE_AFTER_MS = 50;

/**
 * Agent metrics and users (spec 1 §4.12 GET /metrics and /users; bodies not shown), from the
 * invokes the agents area reports through hooks.invokeObservers. Kept in this area's own table
 * (7 days) so it does not depend on the sessions store; `users` counts distinct session ids seen.
 */
export function createAgentActivityArea(): Area {
  let write: (() => void) | undefined;
  return {
  name: 'agent-activity',
  migrations: [
    `
    CREATE TABLE activity_invocations (
      agent_id TEXT NOT NULL REFERENCES agents_agents(id) ON DELETE CASCADE,
      at_ms INTEGER NOT NULL,
      status INTEGER NOT NULL,
      ms REAL NOT NULL,
      user_id TEXT,
      session_id TEXT
    );
    CREATE INDEX activity_invocations_agent ON activity_invocations(agent_id, at_ms);
    CREATE INDEX activity_invocations_user ON activity_invocations(agent_id, user_id);
    `,
  ],
  register(r, ctx) {
    let inserts = 0;
    let pending: Array<InvokeRecord & { at: number }> = [];
    let timer: NodeJS.Timeout | undefined;
    write = () => {
      clearTimeout(timer);
      timer = undefined;
      if (!pending.length) return;
      const rows = pending;
      pending = [];
      // An agent deleted meanwhile took its records with it (ON DELETE CASCADE): its late ones are dropped.
      const insert = stmt(
        ctx.db,
        'INSERT INTO activity_invocations (agent_id, at_ms, status, ms, user_id, session_id) SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM agents_agents WHERE id = ?)',
      );
      tx(ctx.db, () => {
        for (const e of rows) insert.run(e.agentId, e.at, e.status, e.ms, e.userId ?? null, e.sessionId ?? null, e.agentId);
      });
      const before = inserts;
      inserts += rows.length;
      if (Math.floor(inserts / PRUNE_EVERY) !== Math.floor(before / PRUNE_EVERY)) stmt(ctx.db, 'DELETE FROM activity_invocations WHERE at_ms < ?').run(ctx.clock.now() - ACTIVITY_RETENTION_SECONDS * 1000);
    };
    ctx.hooks.invokeObservers.push((e: InvokeRecord) => {
      pending.push({ ...e, at: ctx.clock.now() });
      if (!timer) {
        timer = setTimeout(() => write?.(), WRITE_AFTER_MS);
        timer.unref();
      }
    });
    const owned = (ctx2: AreaContext, p: Parameters<NonNullable<AreaContext['hooks']['ownedAgent']>>[0], name: string, project: string | undefined) => {
      if (!ctx2.hooks.ownedAgent) throw notFound(`unknown agent ${name}`);
      return ctx2.hooks.ownedAgent(p, name, project);
    };
    r.handle(agentActivityRoutes.metrics, ({ principal, params, query }) => {
      const a = owned(ctx, principal!, params.name, query.project);
      write?.();
      const window = query.window_seconds === undefined ? METRICS_WINDOW_DEFAULT_SECONDS : Number(query.window_seconds);
      if (!(window >= 1 && window <= ACTIVITY_RETENTION_SECONDS)) throw badRequest(`window_seconds must be between 1 and ${ACTIVITY_RETENTION_SECONDS}`);
      const since = ctx.clock.now() - window * 1000;
      const rows = stmt(ctx.db, 'SELECT status, ms FROM activity_invocations WHERE agent_id = ? AND at_ms >= ? ORDER BY ms').all(a.agentId, since) as Array<{ status: number; ms: number }>;
      const errors = rows.filter((x) => x.status >= 500).length;
      const clientErrors = rows.filter((x) => x.status >= 400 && x.status < 500).length;
      // Nearest-rank percentiles over the sorted latencies.
      const pct = (p: number) => (rows.length ? Math.round(rows[Math.min(rows.length - 1, Math.ceil((p / 100) * rows.length) - 1)]!.ms * 10) / 10 : null);
      return {
        agent: a.name,
        window_seconds: window,
        since: new Date(since).toISOString(),
        invocations: rows.length,
        errors,
        client_errors: clientErrors,
        error_rate: rows.length ? errors / rows.length : 0,
        latency_ms: { p50: pct(50), p95: pct(95) },
        instances: ctx.hooks.agentInstances?.(a.agentId) ?? 0,
      };
    });
    r.handle(agentActivityRoutes.users, ({ principal, params, query }) => {
      const a = owned(ctx, principal!, params.name, query.project);
      write?.();
      const page = ctx.pager.parse(query, `agent-users:${a.agentId}`);
      const rows = stmt(
        ctx.db,
        `SELECT user_id, COUNT(DISTINCT session_id) AS sessions, COUNT(*) AS invocations, MIN(at_ms) AS first, MAX(at_ms) AS last
         FROM activity_invocations WHERE agent_id = ? AND user_id IS NOT NULL GROUP BY user_id ORDER BY last DESC, user_id LIMIT ? OFFSET ?`,
      ).all(a.agentId, page.size + 1, page.offset) as Array<{ user_id: string; sessions: number; invocations: number; first: number; last: number }>;
      const { items, next_page_token } = ctx.pager.slice(page, rows);
      return {
        agent: a.name,
        users: items.map((u) => ({ user_id: u.user_id, sessions: u.sessions, invocations: u.invocations, first_seen: new Date(u.first).toISOString(), last_seen: new Date(u.last).toISOString() })),
        next_page_token: next_page_token ?? '',
      };
    });
  },
  async stop() {
    write?.();
  },
  };
}
