import { z } from 'zod';
import { route } from './contract.js';
import { lazySchema } from './lazy.js';

/** One dependency of a health report (spec 3 §4.3): its status, whether it is critical, the error. */
export const HealthDependency = lazySchema(() => z.object({ status: z.enum(['ok', 'down', 'not configured']), critical: z.boolean(), error: z.string().optional() }));
export type HealthDependency = z.infer<typeof HealthDependency>;

/**
 * The daemon's one `GET /healthz`: liveness (spec 1) and the messaging health of spec 3 §4.3
 * (status and dependencies), which share the base URL locally. 503 when a critical one is down.
 */
/**
 * The daemon's start after it listens: areas started so far and workloads coming back per kind
 * (docs/decisions/speed-daemon.md). `done` once every area has started and every workload settled.
 */
export const Reconciliation = lazySchema(() => z.object({
  state: z.enum(['reconciling', 'done', 'failed']),
  areas: z.object({ started: z.number().int(), total: z.number().int() }),
  workloads: z.record(z.string(), z.object({ done: z.number().int(), total: z.number().int() })),
  areas_started_ms: z.number().int().optional(),
  errors: z.record(z.string(), z.string()).optional(),
}));
export type Reconciliation = z.infer<typeof Reconciliation>;

export const Health = lazySchema(() => z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  dependencies: z.record(z.string(), HealthDependency),
  reconciliation: Reconciliation.optional(),
}));

export const healthRoutes = {
  healthz: route({
    id: 'health.get',
    method: 'GET',
    path: '/healthz',
    summary: 'Liveness of the daemon and its dependencies (200, or 503 when a critical one is down)',
    auth: 'none',
    unlimited: true,
    status: 200,
    response: Health,
  }),
};

export const openApiRoute = route({
  id: 'openapi.get',
  method: 'GET',
  path: '/v1/openapi.json',
  summary: 'The OpenAPI document of this API, generated from the route contracts',
  auth: 'none',
  status: 200,
  response: lazySchema(() => z.object({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }).passthrough()),
});
