import type { Area, AreaContext } from '../../area.js';
import type { Router } from '../../http/router.js';
import { memoryRoutes, sessionRoutes } from '../../../api/sessions.js';
import { sessionMigrations } from './migrations.js';
import * as svc from './service.js';
import { agentSessionsHook } from './turns.js';

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
    registerRoutes(r, ctx);
  },
};

function registerRoutes(r: Router, ctx: AreaContext): void {
  r.handle(sessionRoutes.list, ({ principal, params, query }) => svc.listSessions(ctx, principal, params.name, query));
  r.handle(sessionRoutes.get, ({ principal, params, query }) => svc.getSession(ctx, principal, params.name, params.id, query.project));
  r.handle(sessionRoutes.delete, ({ principal, params, query }) => svc.deleteSession(ctx, principal, params.name, params.id, query.project));
  r.handle(sessionRoutes.clone, ({ principal, params, query, body }) => svc.cloneSession(ctx, principal, params.name, params.id, query.project, body.new_id));
  r.handle(sessionRoutes.rewind, ({ principal, params, query, body }) => svc.rewindSession(ctx, principal, params.name, params.id, query.project, body.after_turn));
  r.handle(sessionRoutes.memorize, ({ principal, params, query }) => svc.memorize(ctx, principal, params.name, params.id, query.project));
  r.handle(memoryRoutes.policyGet, ({ principal, params, query }) => svc.getPolicy(ctx, principal, params.name, query.project));
  r.handle(memoryRoutes.policyPut, ({ principal, params, query, body }) => svc.putPolicy(ctx, principal, params.name, query.project, body));
  r.handle(memoryRoutes.status, ({ principal, params, query }) => svc.getStatus(ctx, principal, params.name, query.project));
  r.handle(memoryRoutes.list, ({ principal, params, query }) => svc.listMemories(ctx, principal, params.name, query));
  r.handle(memoryRoutes.add, ({ principal, params, query, body }) => svc.addManualMemory(ctx, principal, params.name, query.project, body.fact, body.user_id));
  r.handle(memoryRoutes.erase, ({ principal, params, query }) => svc.eraseUser(ctx, principal, params.name, query.project, query.user_id));
  r.handle(memoryRoutes.delete, ({ principal, params, query }) => svc.deleteMemory(ctx, principal, params.name, query.project, params.id));
  r.handle(memoryRoutes.invalidate, ({ principal, params, query }) => svc.markMemory(ctx, principal, params.name, query.project, params.id, 'invalidated'));
  r.handle(memoryRoutes.confirm, ({ principal, params, query }) => svc.markMemory(ctx, principal, params.name, query.project, params.id, 'confirmed'));
  r.handle(memoryRoutes.reindex, ({ principal, params, query }) => svc.reindexMemory(ctx, principal, params.name, query.project));
}
