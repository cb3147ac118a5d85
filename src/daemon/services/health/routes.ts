import { healthRoutes, openApiRoute, type HealthDependency } from '../../../api/health.js';
import { Reply } from '../../http/router.js';
import { openApiDocument } from '../../../api/openapi.js';
import type { Area } from '../../area.js';

/**
 * Liveness with the dependencies areas report (messaging's health, spec 3 §4.3, shares this path
 * locally), and the self-describing OpenAPI document (built from every registered contract).
 */
export const healthArea: Area = {
  name: 'health',
  register(r, ctx) {
    r.handle(healthRoutes.healthz, () => {
      const dependencies = Object.assign({}, ...ctx.hooks.healthDependencies.map((f) => f())) as Record<string, HealthDependency>;
      const ok = Object.values(dependencies).every((d) => !d.critical || d.status === 'ok');
      // Live while areas still start and workloads come back: the start's progress says how far.
      const body = { status: ok ? ('ok' as const) : ('degraded' as const), version: ctx.config.version, dependencies, reconciliation: ctx.startup.report() };
      return ok ? body : new Reply(503, body);
    });
    let doc: ReturnType<typeof openApiDocument> | undefined;
    r.handle(openApiRoute, () => (doc ??= openApiDocument(r.contracts(), { version: ctx.config.version })) as never);
  },
};
