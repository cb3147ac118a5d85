import type { ApiClient } from './api-client.js';
import { memoryRoutes, sessionRoutes, type MemoryPolicy } from '../api/sessions.js';

/**
 * Typed calls of an agent's sessions and memory (src/api/sessions.ts), shared by the `sessions`
 * and `memory` commands. `query` carries ?project= as every per-agent route takes it.
 */
type Q = { project?: string };

export const sessionsApi = (client: ApiClient, agent: string, query: Q) => ({
  list: (o: { user?: string; pageSize?: number; pageToken?: string }) =>
    client.call(sessionRoutes.list, { params: { name: agent }, query: { ...query, user_id: o.user, page_size: o.pageSize, page_token: o.pageToken } }),
  get: (id: string) => client.call(sessionRoutes.get, { params: { name: agent, id }, query }),
  delete: (id: string) => client.call(sessionRoutes.delete, { params: { name: agent, id }, query }),
  clone: (id: string, newId?: string) => client.call(sessionRoutes.clone, { params: { name: agent, id }, query, body: newId ? { new_id: newId } : {} }),
  rewind: (id: string, afterTurn: number) => client.call(sessionRoutes.rewind, { params: { name: agent, id }, query, body: { after_turn: afterTurn } }),
  memorize: (id: string) => client.call(sessionRoutes.memorize, { params: { name: agent, id }, query }),
});

export const memoryApi = (client: ApiClient, agent: string, query: Q) => ({
  policy: () => client.call(memoryRoutes.policyGet, { params: { name: agent }, query }),
  setPolicy: (p: Partial<MemoryPolicy>) => client.call(memoryRoutes.policyPut, { params: { name: agent }, query, body: p }),
  status: () => client.call(memoryRoutes.status, { params: { name: agent }, query }),
  list: (o: { user?: string; query?: string; all?: boolean; pageSize?: number; pageToken?: string }) =>
    client.call(memoryRoutes.list, {
      params: { name: agent },
      query: { ...query, user_id: o.user, query: o.query, include_invalidated: o.all ? 'true' : undefined, page_size: o.pageSize, page_token: o.pageToken },
    }),
  add: (fact: string, user?: string) => client.call(memoryRoutes.add, { params: { name: agent }, query, body: { fact, ...(user ? { user_id: user } : {}) } }),
  erase: (user: string) => client.call(memoryRoutes.erase, { params: { name: agent }, query: { ...query, user_id: user } }),
  delete: (id: string) => client.call(memoryRoutes.delete, { params: { name: agent, id }, query }),
  invalidate: (id: string) => client.call(memoryRoutes.invalidate, { params: { name: agent, id }, query }),
  confirm: (id: string) => client.call(memoryRoutes.confirm, { params: { name: agent, id }, query }),
  reindex: () => client.call(memoryRoutes.reindex, { params: { name: agent }, query }),
});
