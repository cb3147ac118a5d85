import { ownBaseUrl } from '../../public-address.js';
import type { ServerResponse } from 'node:http';
import { EMBED_RATE_DEFAULT, embedRoutes } from '../../../api/embed.js';
import type { Area, AreaContext, OwnedAgentRef } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { ApiError, forbidden, notFound, tooMany } from '../../http/errors.js';
import { parseInput } from '../../http/validate.js';
import { randomString } from '../../ids.js';
import { stmt } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { WIDGET_SCRIPT } from './widget-script.js';
import { endUserOf, widgetUserId } from './end-user.js';

interface EmbedRow {
  agent_id: string;
  project_id: string;
  agent_name: string;
  key: string;
  origins: string;
  greeting: string;
  theme: string;
  rate_per_minute: number;
  created_at: string;
  updated_at: string;
}

const newKey = () => `emb_${randomString(32)}`;
const unknownKey = () => notFound('unknown embed key');

/**
 * The embeddable widget (spec 1 §4.12 /embed and /v1/embed/{key}/…). Settings per agent (owner
 * rights through hooks.ownedAgent); the anonymous routes check Origin against the allow list,
 * limit each client address per key and minute, and invoke through hooks.invokeAgent, so the
 * page never holds a credential: the key only names the widget.
 */
export function embedArea(): Area {
  // Fixed one-minute windows per key and client address.
  const windows = new Map<string, { start: number; count: number }>();
  return {
    name: 'embed',
    migrations: [
      `
      CREATE TABLE embed_configs (
        agent_id TEXT PRIMARY KEY REFERENCES agents_agents(id) ON DELETE CASCADE,
        project_id TEXT NOT NULL,
        agent_name TEXT NOT NULL,
        key TEXT NOT NULL UNIQUE,
        origins TEXT NOT NULL,
        greeting TEXT NOT NULL,
        theme TEXT NOT NULL,
        rate_per_minute INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      `,
    ],
    register(r, ctx) {
      const owned = (p: Principal, name: string, project: string | undefined): OwnedAgentRef => {
        if (!ctx.hooks.ownedAgent) throw notFound(`unknown agent ${name}`);
        return ctx.hooks.ownedAgent(p, name, project);
      };
      const byAgent = (agentId: string) => stmt(ctx.db, 'SELECT * FROM embed_configs WHERE agent_id = ?').get(agentId) as EmbedRow | undefined;
      const byKey = (key: string) => stmt(ctx.db, 'SELECT * FROM embed_configs WHERE key = ?').get(key) as EmbedRow | undefined;
      const now = () => new Date(ctx.clock.now()).toISOString();
      const view = (row: EmbedRow, host: string | undefined) => ({
        agent: row.agent_name,
        key: row.key,
        allowed_origins: JSON.parse(row.origins) as string[],
        greeting: row.greeting,
        theme: JSON.parse(row.theme) as Record<string, string>,
        rate_limit_per_minute: row.rate_per_minute,
        snippet: `<script src="${ctx.config.server ? ownBaseUrl(ctx.config) : `http://${host ?? `127.0.0.1:${ctx.config.port}`}`}/v1/embed/widget.js" data-key="${row.key}" async></script>`,
        created_at: row.created_at,
        updated_at: row.updated_at,
      });
      const audit = (a: OwnedAgentRef, p: Principal, action: string, requestId: string) =>
        writeAudit(ctx.db, ctx.clock, { projectId: a.projectId, actor: p.email, action, target: a.name, requestId });

      r.handle(embedRoutes.get, ({ principal, params, query, req }) => {
        const a = owned(principal!, params.name, query.project);
        const row = byAgent(a.agentId);
        if (!row) throw notFound(`agent ${a.name} has no widget: PUT /v1/agents/${a.name}/embed enables one`);
        return view(row, req.headers.host);
      });
      r.handle(embedRoutes.put, ({ principal, params, query, body, req, requestId }) => {
        const a = owned(principal!, params.name, query.project);
        const t = now();
        ctx.db.transaction(() => {
          const old = byAgent(a.agentId);
          stmt(
            ctx.db,
            `INSERT INTO embed_configs (agent_id, project_id, agent_name, key, origins, greeting, theme, rate_per_minute, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (agent_id) DO UPDATE SET origins = excluded.origins, greeting = excluded.greeting, theme = excluded.theme, rate_per_minute = excluded.rate_per_minute, updated_at = excluded.updated_at`,
          ).run(a.agentId, a.projectId, a.name, old?.key ?? newKey(), JSON.stringify([...new Set(body.allowed_origins.map((o) => o.toLowerCase()))]), body.greeting ?? '', JSON.stringify(body.theme ?? {}), body.rate_limit_per_minute ?? EMBED_RATE_DEFAULT, t, t);
          audit(a, principal!, 'agent.embed.put', requestId);
        })();
        return view(byAgent(a.agentId)!, req.headers.host);
      });
      r.handle(embedRoutes.delete, ({ principal, params, query, requestId }) => {
        const a = owned(principal!, params.name, query.project);
        ctx.db.transaction(() => {
          if (!stmt(ctx.db, 'DELETE FROM embed_configs WHERE agent_id = ?').run(a.agentId).changes) throw notFound(`agent ${a.name} has no widget`);
          audit(a, principal!, 'agent.embed.delete', requestId);
        })();
        return { agent: a.name, deleted: true as const };
      });
      r.handle(embedRoutes.rotateKey, ({ principal, params, query, req, requestId }) => {
        const a = owned(principal!, params.name, query.project);
        ctx.db.transaction(() => {
          if (!stmt(ctx.db, 'UPDATE embed_configs SET key = ?, updated_at = ? WHERE agent_id = ?').run(newKey(), now(), a.agentId).changes) throw notFound(`agent ${a.name} has no widget`);
          audit(a, principal!, 'agent.embed.rotate-key', requestId);
        })();
        return view(byAgent(a.agentId)!, req.headers.host);
      });

      /** The widget's row when the request's Origin is allowed; CORS headers name that origin only. */
      const admitted = (key: string, origin: string | undefined, res: ServerResponse): EmbedRow => {
        const row = byKey(key);
        if (!row) throw unknownKey();
        const allowed = JSON.parse(row.origins) as string[];
        if (!origin || !allowed.includes(origin.toLowerCase())) throw forbidden(`origin ${origin ?? '(none)'} is not allowed to use this widget`);
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Vary', 'Origin');
        return row;
      };
      r.handle(embedRoutes.publicConfig, ({ params, req, res }) => {
        const row = admitted(params.key, req.headers.origin, res);
        return { agent: row.agent_name, greeting: row.greeting, theme: JSON.parse(row.theme) };
      });
      r.raw(embedRoutes.publicInvoke, async (c, raw) => {
        const { key } = parseInput(embedRoutes.publicInvoke.params, raw, 'path');
        const row = admittedAndCounted(key, c);
        if (!ctx.hooks.invokeAgent) throw new ApiError(503, 'agents are not available');
        await ctx.hooks.invokeAgent(c, row.project_id, row.agent_name, endUserOf(row.agent_id));
      });
      /** Origin and rate checks of every anonymous widget call; reads count in the same window as invokes. */
      const admittedAndCounted = (key: string, c: { req: { headers: { origin?: string } }; res: ServerResponse; ip: string }): EmbedRow => {
        const row = admitted(key, c.req.headers.origin, c.res);
        const wait = take(windows, `${row.key}|${c.ip}`, row.rate_per_minute, ctx.clock.now());
        if (wait > 0) throw tooMany(`rate limit of this widget exceeded (${row.rate_per_minute} a minute per address): retry after the time in Retry-After`, wait);
        return row;
      };
      const sessionsOf = () => {
        if (!ctx.hooks.agentSessions) throw new ApiError(503, 'sessions are not available');
        return ctx.hooks.agentSessions;
      };
      r.handle(embedRoutes.publicSessions, (c) => {
        const row = admittedAndCounted(c.params.key, c);
        const user = widgetUserId(row.agent_id, c.body.end_user);
        // The list is scoped by the owner id, so its page tokens never fit another end user's list.
        const page = ctx.pager.parse({ page_size: c.body.page_size?.toString(), page_token: c.body.page_token }, `widget-sessions:${row.agent_id}:${user}`);
        const { items, next_page_token } = ctx.pager.slice(page, sessionsOf().userSessions(row.agent_id, user, page.size + 1, page.offset));
        return { sessions: items, next_page_token: next_page_token ?? '' };
      });
      r.handle(embedRoutes.publicSession, (c) => {
        const row = admittedAndCounted(c.params.key, c);
        const found = sessionsOf().userSession(row.agent_id, c.params.id, widgetUserId(row.agent_id, c.body.end_user));
        // Another end user's session is exactly as unknown as a missing one.
        if (!found) throw notFound(`unknown session ${c.params.id}`);
        return found;
      });
      r.raw(embedRoutes.script, async ({ res }) => {
        res.statusCode = 200;
        res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
        res.setHeader('Cache-Control', 'public, max-age=300');
        res.end(WIDGET_SCRIPT);
      });
    },
  };
}

/** Counts one request in its key's current minute; returns seconds to wait when over the limit. */
function take(windows: Map<string, { start: number; count: number }>, id: string, perMinute: number, now: number): number {
  if (windows.size > 50_000) for (const [k, w] of windows) if (now - w.start >= 60_000) windows.delete(k);
  let w = windows.get(id);
  if (!w || now - w.start >= 60_000) windows.set(id, (w = { start: now, count: 0 }));
  if (w.count >= perMinute) return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
  w.count++;
  return 0;
}
