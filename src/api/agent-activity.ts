import { z } from 'zod';
import { route } from './contract.js';
import { PageQuery, Timestamp } from './common.js';
import { AgentName } from './agents.js';
import { lazySchema } from './lazy.js';

/** Invocation records are kept this long; the metrics window can reach back as far (7 days). */
export const ACTIVITY_RETENTION_SECONDS = 7 * 24 * 3600;
export const METRICS_WINDOW_DEFAULT_SECONDS = 3600;

const NameParams = lazySchema(() => z.object({ name: AgentName }));

export const agentActivityRoutes = {
  metrics: route({
    id: 'agents.metrics',
    method: 'GET',
    path: '/v1/agents/{name}/metrics',
    summary: 'Invocations, errors, p50/p95 latency over a recent window, and running instances',
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => z.object({ project: z.string().optional(), window_seconds: z.string().regex(/^\d+$/, 'must be a whole number of seconds').optional() })),
    status: 200,
    response: lazySchema(() => z.object({
      agent: z.string(),
      window_seconds: z.number().int(),
      since: Timestamp,
      invocations: z.number().int(),
      /** Invokes answered with 5xx (the agent or platform failed); 4xx are the caller's and counted apart. */
      errors: z.number().int(),
      client_errors: z.number().int(),
      error_rate: z.number(),
      /** Milliseconds from routing to the end of the response; null with no invocations in the window. */
      latency_ms: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
      /** Running instances now. */
      instances: z.number().int(),
    })),
  }),
  users: route({
    id: 'agents.users',
    method: 'GET',
    path: '/v1/agents/{name}/users',
    summary: 'End users seen by invokes (user_id), with their session and invocation counts, most recent first',
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => PageQuery.extend({ project: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({
      agent: z.string(),
      users: z.array(z.object({ user_id: z.string(), sessions: z.number().int(), invocations: z.number().int(), first_seen: Timestamp, last_seen: Timestamp })),
      next_page_token: z.string(),
    })),
  }),
};
