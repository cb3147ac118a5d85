import { healthRoutes } from '../../../api/health.js';
import type { Area } from '../../area.js';

export const healthArea: Area = {
  name: 'health',
  register(r, ctx) {
    r.handle(healthRoutes.healthz, () => ({ status: 'ok' as const, version: ctx.config.version }));
  },
};
