import { auditRoutes } from '../../../api/audit.js';
import type { Area } from '../../area.js';
import { listAudit, listPlatformAudit } from './service.js';

/** The audit log readout (spec 1 §4.11). Rows are written by every area through writeAudit. */
export const auditArea: Area = {
  name: 'audit',
  register(r, ctx) {
    r.handle(auditRoutes.list, ({ principal, params, query }) => listAudit(ctx, principal!, params.projectID, query));
    r.handle(auditRoutes.platform, ({ query }) => listPlatformAudit(ctx, query));
  },
};
