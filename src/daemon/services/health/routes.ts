import { healthRoutes, openApiRoute } from '../../../api/health.js';
import { openApiDocument } from '../../../api/openapi.js';
import type { Area } from '../../area.js';

/** Liveness and the self-describing OpenAPI document (built from every registered contract). */
export const healthArea: Area = {
  name: 'health',
  register(r, ctx) {
    r.handle(healthRoutes.healthz, () => ({ status: 'ok' as const, version: ctx.config.version }));
    let doc: ReturnType<typeof openApiDocument> | undefined;
    r.handle(openApiRoute, () => (doc ??= openApiDocument(r.contracts(), { version: ctx.config.version })) as never);
  },
};
